"""Level names: how a level of a hierarchy, and a whole distance vector, read to a person.

A vector such as ``[1, 2, 1]`` says nothing without its hierarchies; ``age: bands of 10, zip: 3
digits, sex: *`` says what a release would look like. Builders name their levels from their
parameters; a hierarchy read from a file gets a name from one of its own values at that level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from microrelease.core.lattice.hierarchies.hierarchy import Hierarchy

AS_IS = "as is"  # level 0: the original values
TOP = "*"  # the usual single top value: every value suppressed to "any"
SAMPLE_CHARS = 24  # a longer example value is cut, so a vector still reads on one line


def default_level_names(rows: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """Names for a hierarchy given without them (an ARX file, a taxonomy).

    Level 0 is ``"as is"``; a single top value ``"*"`` is ``"*"``; any other level j is
    ``"level j (e.g. <one of its values>)"``, or ``"level j (all: <value>)"`` for a single top value
    that is not ``*``. The example is the first value that differs from its row's value a level
    below, so it shows what generalizing did (a padded taxonomy leaf repeats itself).
    """
    depth = len(rows[0])
    names = [AS_IS]
    for j in range(1, depth):
        labels = {r[j] for r in rows}
        if j == depth - 1 and len(labels) == 1:
            (top,) = labels
            names.append(TOP if top == TOP else f"level {j} (all: {_cut(top)})")
            continue
        sample = next((r[j] for r in rows if r[j] != r[j - 1]), rows[0][j])
        names.append(f"level {j} (e.g. {_cut(sample)})")
    return tuple(names)


def describe_levels(hierarchies: Sequence[Hierarchy], vector: Sequence[int]) -> dict[str, str]:
    """Each attribute's level name at ``vector`` (QI order), e.g. ``{"age": "bands of 10", "sex": "*"}``."""
    if len(hierarchies) != len(vector):
        raise ValueError(f"vector {list(vector)} has {len(vector)} levels for {len(hierarchies)} hierarchies")
    return {h.attribute: h.level_name(int(d)) for h, d in zip(hierarchies, vector, strict=True)}


def describe_vector(hierarchies: Sequence[Hierarchy], vector: Sequence[int]) -> str:
    """``vector`` spelled with level names: ``"age: bands of 10, zip: 3 digits, sex: *"``."""
    return ", ".join(f"{a}: {name}" for a, name in describe_levels(hierarchies, vector).items())


def describe_vectors(hierarchies: Sequence[Hierarchy], grid) -> list[str]:
    """Each row of ``grid`` (nodes x QIs levels) spelled as ``describe_vector`` spells it, each
    attribute's ``"a: name"`` written once per level rather than once per node (500 nodes drawn at 12 QIs)."""
    parts = [[f"{h.attribute}: {h.level_name(d)}" for d in range(h.height + 1)] for h in hierarchies]
    return [", ".join(p[d] for p, d in zip(parts, row, strict=True)) for row in grid.tolist()]


def _cut(value: str) -> str:
    return value if len(value) <= SAMPLE_CHARS else value[: SAMPLE_CHARS - 1] + "…"
