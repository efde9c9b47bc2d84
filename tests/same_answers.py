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


def same_search(pruned, answer) -> None:
    """A pruned search and a profile's answer to one question: the same k-minimal set and Find_vector trace."""
    assert pruned.k_minimal_indices.tolist() == answer.k_minimal_indices.tolist()
    assert pruned.find_vector().to_dict() == answer.find_vector().to_dict()


def same_preferred(searched, answer, policy: str) -> bool:
    """The same preferred node under ``policy`` (and, for a quality policy, the same score), or both
    without one (NoSolutionError). Returns whether there was one."""
    import pytest

    from microrelease.core import POLICIES
    from microrelease.core.exceptions import NoSolutionError

    try:
        expected = answer.preferred(policy)
    except NoSolutionError:
        with pytest.raises(NoSolutionError):
            searched.preferred(policy)
        return False
    got = searched.preferred(policy)
    same_node(got, expected)
    if POLICIES[policy].quality:
        assert math.isclose(searched.score(policy, got.vector), answer.score(policy, expected.vector),
                            rel_tol=1e-9, abs_tol=1e-9), policy
    return True
