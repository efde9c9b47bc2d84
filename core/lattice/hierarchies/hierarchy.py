"""Value and domain generalization hierarchies (Samarati §2.1).

Samarati: each attribute A has a *domain generalization hierarchy* DGH_A, a total order of domains
D_0 < D_1 < ... < D_h (h is the height), and a *value generalization hierarchy* VGH_A, a tree whose
leaves are the ground values in D_0 and whose single root is the one value of D_h. A node of the
lattice picks one domain (level) per quasi-identifier.

We store a hierarchy the way ARX writes it: one row per ground value, column j holding that value's
generalization at level j. The tree is implied by the columns; validation makes sure it really is a
tree (each value has one parent, the top has one value), so that "generalize to level j" is a
function and the roll-up from level j to j+1 is well defined.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.exceptions import CoverageError, HierarchyError
from microrelease.core.lattice.hierarchies.names import default_level_names

#: A missing value (empty cell, NaN, None) is the label "" in the data. If the hierarchy has a ground
#: value "", that row maps it; otherwise it is a value of its own at every level below the top and
#: joins the single top value at the top level (see ``Hierarchy.with_missing``).
MISSING = ""


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A validated generalization hierarchy for one attribute.

    Parameters
    ----------
    attribute : the attribute (column) name, used in every error message.
    rows : one tuple per ground value: ``(ground, level-1 label, ..., top label)``.
    level_names : optional names of the levels (``("as is", "bands of 5", ..., "*")``); defaults to
        ``"as is"``, ``"level j (e.g. <a value at level j>)"``, ..., ``"*"`` (see
        ``default_level_names``).
    """

    attribute: str
    rows: tuple[tuple[str, ...], ...]
    level_names: tuple[str, ...] = ()
    # derived in __post_init__
    ground: tuple[str, ...] = field(init=False, repr=False)
    labels: tuple[tuple[str, ...], ...] = field(init=False, repr=False)
    codes: np.ndarray = field(init=False, repr=False)
    parents: tuple[np.ndarray, ...] = field(init=False, repr=False)
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        rows = tuple(tuple(str(v) for v in r) for r in self.rows)
        object.__setattr__(self, "rows", rows)
        _validate_rows(self.attribute, rows)
        depth = len(rows[0])
        names = tuple(str(n) for n in self.level_names) or default_level_names(rows)
        if len(names) != depth:
            raise HierarchyError(self.attribute, f"{len(names)} level names given for {depth} levels")
        object.__setattr__(self, "level_names", names)

        labels, codes = [], np.empty((depth, len(rows)), dtype=np.int32)
        for j in range(depth):
            uniq: dict[str, int] = {}
            for i, r in enumerate(rows):
                codes[j, i] = uniq.setdefault(r[j], len(uniq))
            labels.append(tuple(uniq))
        parents = []
        for j in range(depth - 1):
            up = np.empty(len(labels[j]), dtype=np.int32)
            up[codes[j]] = codes[j + 1]
            parents.append(up)
        codes.setflags(write=False)
        object.__setattr__(self, "ground", tuple(r[0] for r in rows))
        object.__setattr__(self, "labels", tuple(labels))
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "parents", tuple(parents))
        object.__setattr__(self, "index", {g: i for i, g in enumerate(self.ground)})

    @property
    def height(self) -> int:
        """h: the number of generalization steps above the ground domain."""
        return len(self.rows[0]) - 1

    def level_size(self, level: int) -> int:
        """|D_level|: the number of distinct values at that level.

        Parameters
        ----------
        level : int
            A level, 0 (as is) to the height.

        Returns
        -------
        int
            Its number of distinct values.
        """
        return len(self.labels[level])

    def level_name(self, level: int) -> str:
        """How ``level`` reads to a person (``"as is"``, ``"bands of 10"``, ``"*"``).

        Parameters
        ----------
        level : int
            A level, 0 (as is) to the height.

        Returns
        -------
        str
            Its name.
        """
        self._validate_level(level)
        return self.level_names[level]

    def generalize(self, values: Iterable[str], level: int) -> list[str]:
        """Each value's generalization at ``level`` (values must be ground values).

        Parameters
        ----------
        values : iterable of str
            Values of the attribute.
        level : int
            The level to generalize to.

        Returns
        -------
        list of str
            Each value's label at ``level``.

        Examples
        --------
        >>> taxonomy("sex", {"M": "*", "F": "*"}).generalize(["M", "F"], 1)
        ['*', '*']
        """
        self._validate_level(level)
        codes = self.encode(values if isinstance(values, pd.Series) else list(values))
        return np.asarray(self.labels[level], dtype=object)[self.codes[level][codes]].tolist()

    def encode(self, values: Sequence[str] | pd.Series) -> np.ndarray:
        """Ground codes of ``values``; raises CoverageError listing the values not in the hierarchy.

        Parameters
        ----------
        values : sequence of str or pandas.Series
            Values of the attribute.

        Returns
        -------
        numpy.ndarray
            The row number of each value in the hierarchy.
        """
        series = pd.Series(values, dtype=object)
        codes = series.map(self.index)
        if codes.isna().any():
            missing = series[codes.isna()].value_counts()
            raise CoverageError(self.attribute, {str(k): int(v) for k, v in missing.items()})
        return codes.to_numpy(dtype=np.int32)

    def missing_values(self, values: Sequence[str] | pd.Series) -> dict[str, int]:
        """Data values absent from the ground domain, with their row counts (empty if covered).

        Parameters
        ----------
        values : sequence of str or pandas.Series
            Values of the attribute.

        Returns
        -------
        dict of str to int
            Each value absent from the hierarchy and how often it occurs.
        """
        series = pd.Series(values, dtype=object)
        absent = series[~series.isin(self.index.keys())]
        return {str(k): int(v) for k, v in absent.value_counts().items()}

    def with_missing(self) -> Hierarchy:
        """This hierarchy extended with the missing-value rule (see ``MISSING``)."""
        if MISSING in self.index:
            return self
        top = self.rows[0][-1] if self.height else MISSING
        extra = (MISSING,) * self.height + (top,) if self.height else (MISSING,)
        return Hierarchy(self.attribute, (*self.rows, extra), self.level_names)

    def tree_order(self) -> np.ndarray:
        """Each ground value's position when the ground is sorted by its ancestors from the top down
        (siblings next to each other, so |position difference| / (n − 1) <= NCP of the two's ancestor)."""
        order = np.lexsort(self.codes[::-1])  # lexsort's last key is the primary one: the top level
        position = np.empty(len(order), dtype=np.int64)
        position[order] = np.arange(len(order))
        return position

    def lca_levels(self) -> np.ndarray:
        """(n_ground × n_ground) matrix: the level of the lowest common ancestor of two ground values.

        This is the per-attribute entry of Samarati's outlier distance matrix VT (§5.2). Two values
        that never meet (possible only with a height-0 hierarchy) get height + 1, above every node.
        """
        n = len(self.ground)
        lca = np.full((n, n), self.height + 1, dtype=np.int16)
        for j in range(self.height, -1, -1):
            same = self.codes[j][:, None] == self.codes[j][None, :]
            lca[same] = j
        return lca

    def to_frame(self) -> pd.DataFrame:
        """The hierarchy as a table: one row per ground value, one column per level."""
        return pd.DataFrame(list(self.rows), columns=list(self.level_names))

    def _validate_level(self, level: int) -> None:
        if not 0 <= level <= self.height:
            raise HierarchyError(self.attribute, f"level {level} outside 0..{self.height}")


def _validate_rows(attribute: str, rows: tuple[tuple[str, ...], ...]) -> None:
    if not rows:
        raise HierarchyError(attribute, "it has no rows")
    depth = len(rows[0])
    if depth == 0:
        raise HierarchyError(attribute, "its first row is empty")
    ragged = [(i + 1, len(r)) for i, r in enumerate(rows) if len(r) != depth]
    if ragged:
        shown = ", ".join(f"row {i} has {n}" for i, n in ragged[:10])
        raise HierarchyError(attribute, f"ragged rows: row 1 has {depth} levels but {shown}")
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r[0]] += 1
    dup = sorted(v for v, n in counts.items() if n > 1)
    if dup:
        raise HierarchyError(attribute, f"duplicate ground values: {dup[:20]}")
    for j in range(depth - 1):
        parent_of: dict[str, set[str]] = defaultdict(set)
        for r in rows:
            parent_of[r[j]].add(r[j + 1])
        clash = {v: sorted(p) for v, p in parent_of.items() if len(p) > 1}
        if clash:
            shown = "; ".join(f"{v!r} -> {p}" for v, p in sorted(clash.items())[:10])
            raise HierarchyError(attribute, f"value(s) with two different parents at level {j} -> {j + 1}: {shown}")
    if depth > 1:
        tops = sorted({r[-1] for r in rows})
        if len(tops) > 1:
            raise HierarchyError(attribute, f"the top level must hold one value, it holds {len(tops)}: {tops[:10]}")
    # A label may recur at higher levels (rows 'M;M;*'), but only for the same thing: with rows
    # '30;31;*' and '31;30;*', 30 would be released as '31', which the data also uses for 31.
    for i in range(depth - 1):
        for j in range(i + 1, depth):
            above = {r[j] for r in rows}
            moved = sorted({(r[i], r[j]) for r in rows if r[i] in above and r[j] != r[i]})
            if moved:
                shown = ", ".join(f"{v!r} -> {u!r}" for v, u in moved[:10])
                raise HierarchyError(attribute, f"a value that is also a level-{j} value must generalize to "
                                                f"itself at level {j} (else a released label means two "
                                                f"things), but from level {i}: {shown}")
