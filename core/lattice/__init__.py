"""Samarati's k-anonymity by generalization and suppression (IEEE TKDE 2001)."""

from typing import TYPE_CHECKING

from microrelease.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from microrelease.core.lattice.distance_vectors import Lattice, Node
    from microrelease.core.lattice.frequency import FrequencySource
    from microrelease.core.lattice.generalization import GeneralizedTable, generalize, satisfies
    from microrelease.core.lattice.hierarchies import (
        Hierarchy,
        dates,
        intervals,
        masking,
        read_arx,
        taxonomy,
        write_arx,
    )
    from microrelease.core.lattice.metrics import METRICS
    from microrelease.core.lattice.node_release import (
        NodeRelease,
        OutputOptions,
        check_k_anonymity,
        write_release,
    )
    from microrelease.core.lattice.outliers import outlier_matrix
    from microrelease.core.lattice.policies import POLICIES
    from microrelease.core.lattice.profile import LatticeProfile, build_profile
    from microrelease.core.lattice.quality import QUALITY_MODELS
    from microrelease.core.lattice.search import Answer, find_vector, k_minimal, query

# The public names, each from its module, resolved on first use (see microrelease.core.lazy_exports).
_MODULES = {
    "distance_vectors": ["Lattice", "Node"],
    "frequency": ["FrequencySource"],
    "generalization": ["GeneralizedTable", "generalize", "satisfies"],
    "hierarchies": ["Hierarchy", "dates", "intervals", "masking", "read_arx", "taxonomy", "write_arx"],
    "metrics": ["METRICS"],
    "node_release": ["NodeRelease", "OutputOptions", "check_k_anonymity", "write_release"],
    "outliers": ["outlier_matrix"],
    "policies": ["POLICIES"],
    "profile": ["LatticeProfile", "build_profile"],
    "quality": ["QUALITY_MODELS"],
    "search": ["Answer", "find_vector", "k_minimal", "query"],
}
__getattr__, __dir__ = lazy_exports(__name__, _MODULES)


__all__ = [
    "Answer",
    "FrequencySource",
    "GeneralizedTable",
    "Hierarchy",
    "Lattice",
    "LatticeProfile",
    "METRICS",
    "Node",
    "NodeRelease",
    "OutputOptions",
    "POLICIES",
    "QUALITY_MODELS",
    "build_profile",
    "check_k_anonymity",
    "dates",
    "find_vector",
    "generalize",
    "intervals",
    "k_minimal",
    "masking",
    "outlier_matrix",
    "query",
    "read_arx",
    "satisfies",
    "taxonomy",
    "write_arx",
    "write_release",
]
