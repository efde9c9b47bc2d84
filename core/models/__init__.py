"""Privacy models on a sensitive attribute beside k-anonymity: l-diversity and t-closeness."""

from typing import TYPE_CHECKING

from microrelease.core.lazy_exports import lazy_exports

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

# The public names, each from its module, resolved on first use (see microrelease.core.lazy_exports).
_MODULES = {
    "l_diversity": ["DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity"],
    "model_profile": ["MODEL_STRATEGIES", "build_model_profile", "explain_node"],
    "privacy_model": ["PrivacyModel"],
    "sensitive": ["SensitiveFrequency", "prepare_models", "sensitive_frequency"],
    "t_closeness": ["TCloseness"],
}
__getattr__, __dir__ = lazy_exports(__name__, _MODULES)


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
