"""Privacy models on a sensitive attribute beside k-anonymity: l-diversity and t-closeness."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from microrelease.core.models.l_diversity import (
        DistinctLDiversity,
        EntropyLDiversity,
        RecursiveCLDiversity,
    )
    from microrelease.core.models.model_profile import MODEL_STRATEGIES, build_model_profile, explain_node
    from microrelease.core.models.privacy_model import PrivacyModel
    from microrelease.core.models.sensitive import SensitiveFrequency, prepare_models, sensitive_frequency
    from microrelease.core.models.t_closeness import TCloseness

# The public names, each from its module, resolved on first use (PEP 562): importing this package
# imports none of its modules, so no import circle and no extra import time (numba kernels).
_MODULES = {
    "l_diversity": ["DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity"],
    "model_profile": ["MODEL_STRATEGIES", "build_model_profile", "explain_node"],
    "privacy_model": ["PrivacyModel"],
    "sensitive": ["SensitiveFrequency", "prepare_models", "sensitive_frequency"],
    "t_closeness": ["TCloseness"],
}
_HOMES = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DistinctLDiversity",
    "EntropyLDiversity",
    "MODEL_STRATEGIES",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "SensitiveFrequency",
    "TCloseness",
    "build_model_profile",
    "explain_node",
    "prepare_models",
    "sensitive_frequency",
]
