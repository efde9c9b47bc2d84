"""Generalization hierarchies: the model, ARX CSV input/output, builders, and level names."""

from microrelease.core.lattice.hierarchies.arx import find_hierarchy_file, read_arx, write_arx
from microrelease.core.lattice.hierarchies.builders import dates, intervals, masking, taxonomy
from microrelease.core.lattice.hierarchies.hierarchy import MISSING, Hierarchy
from microrelease.core.lattice.hierarchies.names import describe_levels, describe_vector, describe_vectors

__all__ = [
    "MISSING",
    "Hierarchy",
    "dates",
    "describe_levels",
    "describe_vector",
    "describe_vectors",
    "find_hierarchy_file",
    "intervals",
    "masking",
    "read_arx",
    "taxonomy",
    "write_arx",
]
