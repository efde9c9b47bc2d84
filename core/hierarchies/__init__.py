"""Generalization hierarchies: the model, ARX CSV input/output, and builders."""

from microrelease.core.hierarchies.arx import find_hierarchy_file, read_arx, write_arx
from microrelease.core.hierarchies.builders import dates, intervals, masking, taxonomy
from microrelease.core.hierarchies.model import MISSING, Hierarchy

__all__ = [
    "MISSING",
    "Hierarchy",
    "dates",
    "find_hierarchy_file",
    "intervals",
    "masking",
    "read_arx",
    "taxonomy",
    "write_arx",
]
