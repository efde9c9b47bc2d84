"""The one map from an API parameter to the flag that sets it, and the error line built from it.

Core errors name the parameter at fault (``MicroreleaseError.parameter``), never a flag; the command
line prints the flag the user typed in front of the message, so that
``DataError("no hierarchy for QI 'age' ...", parameter="hierarchies")`` reads
``microrelease: error: --hierarchy: no hierarchy for QI 'age' ...``.
"""

from __future__ import annotations

from microrelease.core import MicroreleaseError
from microrelease.core.criteria.registry import flag, spec_parameters

FLAGS = {
    # the table and its columns
    "sample": "--sample",
    "quasi_identifiers": "--qi",
    "identifiers": "--identifier",
    "sensitive": "--sensitive",
    "confidential": "--confidential",
    "attributes": "--attrs",
    "hierarchies": "--hierarchy",
    "hierarchy_dir": "--hierarchy-dir",
    "entity_id": "--entity-id",
    # the lattice question
    "k": "--k",
    "max_sup": "--max-sup",
    "policy": "--policy",
    "weights": "--weights",
    "node": "--node",
    "strategy": "--strategy",
    "memory_budget": "--memory-budget",
    "time_limit": "--time-limit",
    "limit": "--limit",
    # re-identification risk
    "population": "--population",
    "sampling_fraction": "--sampling-fraction",
    "threshold": "--threshold",
    # microaggregation and differential privacy
    "k_per_attribute": "--k-per-attribute",
    "bounds": "--bounds",
    "method": "--method",
    "noise": "--noise",
    "epsilon": "--epsilon",
    "rng": "--seed",
    "keep": "--keep",
    "linked": "--linked-records",
    "bins": "--bins",
    "cuts": "--cuts",
    # relational + sequential data
    "config": "--config",
    "drop": "--drop",
    "order_by": "--order-by",
    "sequence_key": "--sequence-key",
    "code": "--code",
    "weight_relational": "--w-relational",
    "weight_sequence": "--w-sequence",
    "weight_time": "--w-time",
    # engines
    "engine": "--engine",
    "memory_limit": "--memory-limit",
    "spill_dir": "--spill-dir",
    "threads": "--threads",
    "scheduler": "--scheduler",
    # the written release
    "force": "--force",
    "escape": "--escape-formulas",
    "list_classes": "--list-suppressed",
    "publish_reference": "--publish-reference",
    "out_sep": "--out-sep",
    # the dashboard's server
    "host": "--host",
    "port": "--port",
    "allowed_hosts": "--allow-host",
    # every privacy criterion's parameter (k, l_diversity, max_risk, ...), from the core's registry
    **{parameter: flag(parameter) for parameter in spec_parameters()},
}


def error_line(exc: MicroreleaseError) -> str:
    """The one line printed for an error: the flag of the parameter at fault (when it has one), then
    the core's message."""
    flag = FLAGS.get(exc.parameter or "")
    return f"microrelease: error: {flag}: {exc}" if flag else f"microrelease: error: {exc}"
