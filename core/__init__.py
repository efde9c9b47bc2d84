"""microrelease.core: Samarati's k-anonymity by generalization and suppression, as pure computation.

Modules follow the paper's ideas: ``roles`` (attribute roles), ``hierarchies`` (value/domain
generalization hierarchies), ``lattice`` (distance vectors), ``frequency`` (the frequency set),
``generalization`` (generalization with minimal required suppression), ``outliers`` (the outlier
distance matrix VT), ``profile`` (every node's class-size histogram in one pass), ``search``
(k-minimal generalizations, Find_vector), ``policies`` (preference policies), ``metrics``
(accuracy, completeness, ...), ``release`` (the release of a node). ``output``: the one path by which every release is written
and re-checked. For data larger than memory: ``engines`` (pandas, DuckDB, Dask) and ``summary``
(the one pass over the rows). Microaggregation (Soria-Comas's thesis):
``microaggregation`` (MDAV, MDAV-ID, MDAV-SWAP, IR-SWAP), ``information_loss`` (SSE/SST),
``linkage`` (record-linkage risk), ``microdata_release`` (write and re-check).

No UI library is imported here; :mod:`microrelease.app` builds on this package, never the reverse.
"""

from importlib.metadata import PackageNotFoundError, version

from microrelease.core.data.dataset import Dataset, load_dataset, read_table
from microrelease.core.data.roles import AttributeRole, Schema
from microrelease.core.data.samples import SAMPLES, load_sample
from microrelease.core.engines.summary import TableSummary, summarize
from microrelease.core.exceptions import (
    Cancelled,
    CoverageError,
    DataError,
    EngineError,
    HierarchyError,
    InvalidParameterError,
    MicroreleaseError,
    NoSolutionError,
    VerificationError,
)
from microrelease.core.lattice.distance_vectors import Lattice, Node
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
from microrelease.core.lattice.outliers import outlier_matrix
from microrelease.core.lattice.policies import POLICIES
from microrelease.core.lattice.profile import LatticeProfile, build_profile
from microrelease.core.lattice.release import check_k_anonymity, write_release
from microrelease.core.lattice.search import Answer, find_vector, k_minimal, query
from microrelease.core.micro.information_loss import information_loss
from microrelease.core.micro.linkage import linkage_attack
from microrelease.core.micro.microaggregation import METHODS, microaggregate
from microrelease.core.micro.release import write_microaggregation
from microrelease.core.models.base import PrivacyModel
from microrelease.core.models.profile import build_model_profile, explain_node
from microrelease.core.models.registry import PRIVACY_MODELS, parse_models
from microrelease.core.models.sensitive import SensitiveFrequency, prepare_models, sensitive_frequency

try:
    __version__ = version("microrelease")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "METHODS",
    "METRICS",
    "POLICIES",
    "PRIVACY_MODELS",
    "SAMPLES",
    "Answer",
    "AttributeRole",
    "Cancelled",
    "CoverageError",
    "DataError",
    "Dataset",
    "EngineError",
    "GeneralizedTable",
    "Hierarchy",
    "HierarchyError",
    "InvalidParameterError",
    "Lattice",
    "LatticeProfile",
    "MicroreleaseError",
    "NoSolutionError",
    "Node",
    "PrivacyModel",
    "Schema",
    "SensitiveFrequency",
    "TableSummary",
    "VerificationError",
    "build_model_profile",
    "build_profile",
    "check_k_anonymity",
    "dates",
    "explain_node",
    "find_vector",
    "generalize",
    "information_loss",
    "intervals",
    "k_minimal",
    "linkage_attack",
    "load_dataset",
    "load_sample",
    "masking",
    "microaggregate",
    "outlier_matrix",
    "parse_models",
    "prepare_models",
    "query",
    "read_arx",
    "read_table",
    "satisfies",
    "sensitive_frequency",
    "summarize",
    "taxonomy",
    "write_arx",
    "write_microaggregation",
    "write_release",
]
