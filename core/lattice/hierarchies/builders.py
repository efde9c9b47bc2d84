"""Builders for common hierarchies (the shapes ARX's hierarchy wizard offers).

- ``intervals``: numbers into buckets of growing width, then ``*``;
- ``masking``: trailing characters replaced by ``*`` (ZIP 94142 -> 9414* -> 941** -> *);
- ``taxonomy``: an explicit child -> parent mapping;
- ``dates``: day -> month -> year -> ``*``.

Each returns a validated ``Hierarchy`` whose ground values are the given values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from microrelease.core.exceptions import HierarchyError
from microrelease.core.lattice.hierarchies.hierarchy import Hierarchy
from microrelease.core.lattice.hierarchies.names import AS_IS, TOP


def _distinct(values: Iterable[object]) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values))


def intervals(attribute: str, values: Iterable[object], widths: Sequence[float], *, origin: float = 0) -> Hierarchy:
    """Numeric bucket hierarchy: level j puts a value into ``[origin + i*w_j, origin + (i+1)*w_j)``.

    Widths must increase and each must be a whole multiple of the one before, so that every bucket
    lies inside exactly one bucket of the next level (otherwise the result is not a tree). Integer
    buckets are labelled ``"30-34"``; others ``"[30.5, 35.5)"``. The top level is ``"*"``.

    Parameters
    ----------
    attribute : str
        The attribute the hierarchy generalizes.
    values : iterable
        The attribute's (numeric) values.
    widths : sequence of float
        The interval width of each level, each a multiple of the one before.
    origin : float, default 0
        Where the intervals start.

    Returns
    -------
    Hierarchy
        One row per distinct value.

    Raises
    ------
    HierarchyError
        If the values or the levels asked for cannot form the hierarchy.
    """
    if not widths:
        raise HierarchyError(attribute, "intervals need at least one bucket width")
    for j, w in enumerate(widths):
        if not (isinstance(w, int | float) and math.isfinite(w) and w > 0):
            raise HierarchyError(attribute, f"bucket width #{j + 1} must be a positive number, got {w!r}")
        if j and (w <= widths[j - 1] or not math.isclose(w / widths[j - 1], round(w / widths[j - 1]))):
            raise HierarchyError(
                attribute, f"bucket width {w} must be a whole multiple (> 1) of the previous width {widths[j - 1]}"
            )
    ground = _distinct(values)
    bad = [v for v in ground if not _is_number(v)]
    if bad:
        raise HierarchyError(attribute, f"non-numeric values cannot go into intervals: {bad[:20]}")
    integral = all(float(w).is_integer() for w in widths) and float(origin).is_integer()
    integral = integral and all(float(v).is_integer() for v in ground)
    rows = []
    for v in ground:
        x = float(v)
        row = [v]
        for w in widths:
            lo = origin + math.floor((x - origin) / w) * w
            row.append(f"{int(lo)}-{int(lo + w - 1)}" if integral else f"[{lo:g}, {lo + w:g})")
        rows.append((*row, TOP))
    # the builder knows widths, not units: "bands of 10", never "10-year bands"
    names = (AS_IS, *(f"bands of {w:g}" for w in widths), TOP)
    return Hierarchy(attribute, tuple(rows), names)


def masking(attribute: str, values: Iterable[object], masked: Sequence[int] | None = None, *, mask_char: str = "*") -> Hierarchy:
    """Masking hierarchy: level j replaces the last ``masked[j-1]`` characters by ``mask_char``.

    ``masked`` defaults to 1, 2, ..., (shortest length - 1); the top level is always ``"*"``.
    Example: ``masking("zip", ["94142"], [1, 2])`` gives 94142 -> 9414* -> 941** -> *.

    Parameters
    ----------
    attribute : str
        The attribute the hierarchy generalizes.
    values : iterable
        The attribute's values (written as text).
    masked : sequence of int, optional
        How many trailing characters each level masks (default: one more per level, up to all).
    mask_char : str, default "*"
        The character that replaces a masked one.

    Returns
    -------
    Hierarchy
        One row per distinct value.

    Raises
    ------
    HierarchyError
        If the values or the levels asked for cannot form the hierarchy.
    """
    ground = _distinct(values)
    if not ground:
        raise HierarchyError(attribute, "masking needs at least one value")
    shortest = min(len(v) for v in ground)
    steps = list(masked) if masked is not None else list(range(1, shortest))
    for j, n in enumerate(steps):
        if not isinstance(n, int) or not 1 <= n <= shortest:
            raise HierarchyError(attribute, f"cannot mask {n!r} characters: the shortest value has {shortest}")
        if j and n <= steps[j - 1]:
            raise HierarchyError(attribute, f"masked character counts must increase, got {steps}")
    rows = [(v, *(v[: len(v) - n] + mask_char * n for n in steps), TOP) for v in ground]
    names = (AS_IS, *(_masked_name(ground, n) for n in steps), TOP)
    return Hierarchy(attribute, tuple(rows), names)


def _masked_name(ground: list[str], n: int) -> str:
    """Codes of one length read as what is kept ("3 digits"); others as what is masked."""
    lengths = {len(v) for v in ground}
    if len(lengths) == 1:
        kept = lengths.pop() - n
        if kept == 0:
            return "all masked"
        digits = all(ch in "0123456789" for v in ground for ch in v)
        if digits:
            return "1 digit" if kept == 1 else f"{kept} digits"
        return "first character" if kept == 1 else f"first {kept} characters"
    return "last character masked" if n == 1 else f"last {n} characters masked"



def taxonomy(attribute: str, parent_of: Mapping[str, str]) -> Hierarchy:
    """Hierarchy from an explicit child -> parent mapping (one root).

    The ground values are the leaves (values that are nobody's parent). Leaves shallower than the
    deepest one repeat themselves at the bottom so that all paths reach the root at the same level:
    a leaf at depth d in a tree of depth D stays ungeneralized for the first D - d levels.

    Parameters
    ----------
    attribute : str
        The attribute the hierarchy generalizes.
    parent_of : mapping of str to str
        Each value's parent, up to one root.

    Returns
    -------
    Hierarchy
        One row per leaf, from the leaf to the root.

    Raises
    ------
    HierarchyError
        If the taxonomy is empty, has no single root or has a cycle.

    Examples
    --------
    >>> taxonomy("sex", {"M": "*", "F": "*"}).rows
    (('M', '*'), ('F', '*'))
    """
    parent_of = {str(c): str(p) for c, p in parent_of.items()}
    if not parent_of:
        raise HierarchyError(attribute, "the taxonomy is empty")
    roots = sorted(set(parent_of.values()) - set(parent_of))
    if len(roots) != 1:
        raise HierarchyError(attribute, f"a taxonomy needs exactly one root, found {roots or 'none (a cycle)'}")
    leaves = [c for c in parent_of if c not in set(parent_of.values())]
    paths = []
    for leaf in leaves:
        path, node = [leaf], leaf
        while node in parent_of:
            node = parent_of[node]
            if node in path:
                raise HierarchyError(attribute, f"cycle through {node!r}")
            path.append(node)
        paths.append(path)
    depth = max(len(p) for p in paths)
    rows = tuple(tuple([p[0]] * (depth - len(p)) + p) for p in paths)
    return Hierarchy(attribute, rows)  # levels named by example: "level 2 (e.g. health)"


def dates(attribute: str, values: Iterable[object], *, format: str = "%Y-%m-%d") -> Hierarchy:
    """Date hierarchy: day (as given) -> month ``YYYY-MM`` -> year ``YYYY`` -> ``*``.

    Parameters
    ----------
    attribute : str
        The attribute the hierarchy generalizes.
    values : iterable
        The dates, as text in ``format``.
    format : str, default "%Y-%m-%d"
        The dates' format (``datetime.datetime.strptime``).

    Returns
    -------
    Hierarchy
        One row per distinct date.

    Raises
    ------
    HierarchyError
        If the values or the levels asked for cannot form the hierarchy.
    """
    ground = _distinct(values)
    rows, bad = [], []
    for v in ground:
        try:
            d = datetime.strptime(v, format)
        except ValueError:
            bad.append(v)
            continue
        rows.append((v, f"{d.year:04d}-{d.month:02d}", f"{d.year:04d}", TOP))
    if bad:
        raise HierarchyError(attribute, f"values not in the date format {format!r}: {bad[:20]}")
    return Hierarchy(attribute, tuple(rows), (AS_IS, "month", "year", TOP))


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
