"""Relational + sequential data (US patent 9,230,132; RT-anonymity): k-anonymize entities whose
records span a relational table and sequences of sequences (e.g. patients and their visits)."""

from typing import TYPE_CHECKING

from microrelease.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from microrelease.core.sequential.anonymize import SequentialRelease, anonymize_groups
    from microrelease.core.sequential.cost import CostModel, CostWeights
    from microrelease.core.sequential.grouping import group_entities
    from microrelease.core.sequential.guarantee import verify_release
    from microrelease.core.sequential.pipeline import anonymize_sequential, write_sequential
    from microrelease.core.sequential.rt_data import SequentialData, load_sequential
    from microrelease.core.sequential.study import load_study
    from microrelease.core.sequential.study_config import parse_study, read_study
    from microrelease.core.sequential.study_release import anonymize_study, write_study

# The public names, each from its module, resolved on first use (see microrelease.core.lazy_exports).
_MODULES = {
    "pipeline": ["anonymize_sequential", "write_sequential"],
    "rt_data": ["SequentialData", "load_sequential"],
    "study": ["load_study"],
    "study_config": ["parse_study", "read_study"],
    "study_release": ["anonymize_study", "write_study"],
    "guarantee": ["verify_release"],
    "grouping": ["group_entities"],
    "anonymize": ["SequentialRelease", "anonymize_groups"],
    "cost": ["CostModel", "CostWeights"],
}
__getattr__, __dir__ = lazy_exports(__name__, _MODULES)


__all__ = [
    "CostModel",
    "CostWeights",
    "SequentialData",
    "SequentialRelease",
    "anonymize_groups",
    "anonymize_sequential",
    "anonymize_study",
    "verify_release",
    "group_entities",
    "load_sequential",
    "load_study",
    "parse_study",
    "read_study",
    "write_sequential",
    "write_study",
]
