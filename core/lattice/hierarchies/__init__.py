"""Generalization hierarchies: the model, ARX CSV input/output, and builders."""

from microrelease.core.lattice.hierarchies.arx import find_hierarchy_file, read_arx, write_arx
from microrelease.core.lattice.hierarchies.builders import dates, intervals, masking, taxonomy
from microrelease.core.lattice.hierarchies.model import MISSING, Hierarchy

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
