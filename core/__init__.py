"""microrelease.core: releasing microdata without re-identification, as pure computation.

One folder per family of methods, one module per idea of its paper:

- ``data``: the table, its attribute roles (Samarati §2) and the bundled samples;
- ``lattice``: Samarati's k-anonymity (IEEE TKDE 2001): hierarchies, distance vectors, the
  frequency set, generalization with minimal required suppression, the outlier matrix VT, the
  whole-lattice profile, the search (k-minimal, Find_vector), preference policies, metrics, and
  the release of a node;
- ``models``: privacy models on a sensitive attribute (l-diversity, t-closeness), each declared once
  in one registry;
- ``micro``: microaggregation (Soria-Comas's thesis): MDAV and its methods, information loss, linkage;
- ``dp``: differential privacy (the same thesis): optimal noise, DP microdata, ratio closeness;
- ``sequential``: relational + sequential data (US patent 9,230,132);
- ``engines``: the one pass over the rows (pandas, DuckDB, Dask) behind the ``FrequencySource``
  protocol that a ``Dataset`` and a ``TableSummary`` both meet;
- ``release``: the one path by which every release is written, re-read and checked.

No UI library is imported here; ``microrelease.app`` builds on this package, never the reverse.
"""

from importlib.metadata import PackageNotFoundError, version

from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.criteria.k_anonymity import KAnonymity
from microrelease.core.criteria.registry import CRITERIA, parse_criteria
from microrelease.core.data.dataset import Dataset, load_dataset
from microrelease.core.data.reading import read_table
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
    PrivacyWarning,
    VerificationError,
)
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
from microrelease.core.lattice.search import Answer, find_vector, k_minimal, query
from microrelease.core.micro.linkage import record_linkage
from microrelease.core.micro.micro_loss import information_loss
from microrelease.core.micro.micro_release import write_microaggregation
from microrelease.core.micro.microaggregation import METHODS, microaggregate
from microrelease.core.models.model_profile import build_model_profile, explain_node
from microrelease.core.models.privacy_model import PrivacyModel
from microrelease.core.models.sensitive import SensitiveFrequency, prepare_models, sensitive_frequency

try:
    __version__ = version("microrelease")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "METHODS",
    "METRICS",
    "POLICIES",
    "CRITERIA",
    "SAMPLES",
    "Answer",
    "AttributeRole",
    "Cancelled",
    "CoverageError",
    "Criteria",
    "DataError",
    "Dataset",
    "FrequencySource",
    "EngineError",
    "GeneralizedTable",
    "Hierarchy",
    "HierarchyError",
    "InvalidParameterError",
    "KAnonymity",
    "Lattice",
    "LatticeProfile",
    "MicroreleaseError",
    "NoSolutionError",
    "PrivacyWarning",
    "NodeRelease",
    "Node",
    "OutputOptions",
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
    "record_linkage",
    "load_dataset",
    "load_sample",
    "masking",
    "microaggregate",
    "outlier_matrix",
    "parse_criteria",
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
