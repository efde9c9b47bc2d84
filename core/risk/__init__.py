"""Re-identification risk models (prosecutor, journalist, marketer), population uniqueness and
individual risk: estimated from class sizes, for a table or for every node of a lattice at once."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from microrelease.core.risk.criteria import AverageRisk, PopulationUniqueness, RecordsAtRisk
    from microrelease.core.risk.individual import individual_risk, reidentifications_by_node
    from microrelease.core.risk.k_map import (
        KMap,
        KMapProfile,
        code_population,
        joint_profile,
        read_population,
    )
    from microrelease.core.risk.reidentification import FIGURES, Risk, node_risk, population_sizes, table_risk
    from microrelease.core.risk.uniqueness import MODELS, dankar, uniqueness_by_node

# The public names, each from its module, resolved on first use (PEP 562): importing this package
# imports none of its modules, so no import circle and no extra import time (numba kernels).
_MODULES = {
    "criteria": ["AverageRisk", "PopulationUniqueness", "RecordsAtRisk"],
    "individual": ["individual_risk", "reidentifications_by_node"],
    "k_map": ["KMap", "KMapProfile", "code_population", "joint_profile", "read_population"],
    "reidentification": ["FIGURES", "Risk", "node_risk", "population_sizes", "table_risk"],
    "uniqueness": ["MODELS", "dankar", "uniqueness_by_node"],
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
    "AverageRisk",
    "FIGURES",
    "KMap",
    "KMapProfile",
    "MODELS",
    "PopulationUniqueness",
    "RecordsAtRisk",
    "Risk",
    "code_population",
    "dankar",
    "individual_risk",
    "joint_profile",
    "node_risk",
    "population_sizes",
    "read_population",
    "reidentifications_by_node",
    "table_risk",
    "uniqueness_by_node",
]
