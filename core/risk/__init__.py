"""Re-identification risk models (prosecutor, journalist, marketer), population uniqueness and
individual risk: estimated from class sizes, for a table or for every node of a lattice at once."""

from typing import TYPE_CHECKING

from microrelease.core.lazy_exports import lazy_exports

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

# The public names, each from its module, resolved on first use (see microrelease.core.lazy_exports).
_MODULES = {
    "criteria": ["AverageRisk", "PopulationUniqueness", "RecordsAtRisk"],
    "individual": ["individual_risk", "reidentifications_by_node"],
    "k_map": ["KMap", "KMapProfile", "code_population", "joint_profile", "read_population"],
    "reidentification": ["FIGURES", "Risk", "node_risk", "population_sizes", "table_risk"],
    "uniqueness": ["MODELS", "dankar", "uniqueness_by_node"],
}
__getattr__, __dir__ = lazy_exports(__name__, _MODULES)


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
