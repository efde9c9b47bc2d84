"""Comparing two answers' node results (the pruned search's and a profile's)."""

from __future__ import annotations

import math

FLOATS = ("accuracy", "completeness", "rel_distance", "avg_class_size", "max_risk", "average_risk")


def same_node(a, b) -> None:
    """Two NodeResults of the same node with the same figures (floats summed in another order)."""
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        if name in FLOATS:
            assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12), (name, x, y)
        else:
            assert x == y, (name, x, y)
