"""The events of several event tables as one code hierarchy (the patent's sequential part in tables).

An *event* of table T carries one or more code columns c_1..c_m, each with its own hierarchy. The
alignment and the cost F read one code per element, so every event is one *event code*: the pair
(T, (v_1, ..., v_m)). Its hierarchy, ``event_hierarchy``, generalizes the columns **in step**:
at level j an event code reads (T, (anc_j(v_1), ..., anc_j(v_m))), each column stopping at its own top
(anc_j = the value's label at level min(j, height of its column)). Because each column's level-j label
determines its level-(j+1) label, the pairs form a tree: lowest common ancestors and NCPs are those of
one hierarchy. Its ground values are the event codes the data has, so NCP counts observed
combinations.

The trees of the tables hang under one synthetic root (``ROOT``), above every table's top. Two
events of different tables meet only there: F charges such a pair 1, like a suppression, and the
anonymization never releases the root (``align_groups``
gets it as infinitely costly), so every released event belongs to one table and keeps its columns.

A label is the table's name and the column labels joined by ``SEPARATOR`` (a control character
that no cell may hold; ``split_label`` reads it back).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from microrelease.core.data.reading import as_text
from microrelease.core.exceptions import CoverageError, DataError
from microrelease.core.lattice.hierarchies import MISSING, Hierarchy

SEPARATOR = "\x1f"  # ASCII unit separator
ROOT = "any event"


@dataclass(frozen=True)
class EventColumns:
    """One event table's code columns and their hierarchies (in the order the table lists them)."""

    table: str
    codes: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]


def _label(table: str, values: Sequence[str]) -> str:
    return SEPARATOR.join((table, *values))


def split_label(label: str) -> tuple[str, tuple[str, ...]]:
    """(table, column labels) of an event-code label."""
    table, *values = label.split(SEPARATOR)
    return table, tuple(values)


def event_labels(frame: pd.DataFrame, spec: EventColumns) -> pd.Series:
    """Each row's event-code ground label; DataError or CoverageError naming a column whose cell is
    blank (unless its hierarchy maps ``""``), holds ``SEPARATOR``, or is not in its hierarchy."""
    columns = []
    for name, h in zip(spec.codes, spec.hierarchies, strict=True):
        text = as_text(frame[name])
        if MISSING not in h.index and (text == MISSING).any():
            raise DataError(f"{int((text == MISSING).sum())} event(s) of {spec.table!r} have a blank {name!r}",
                            parameter="config")
        if text.str.contains(SEPARATOR, regex=False).any():
            raise DataError(f"the code column {name!r} of {spec.table!r} holds the control character U+001F",
                            parameter="config")
        absent = text[~text.isin(h.index.keys())].value_counts()
        if len(absent):
            raise CoverageError(h.attribute, {str(v): int(n) for v, n in absent.items()})
        columns.append(text)
    if not columns:
        raise DataError(f"the event table {spec.table!r} names no code column", parameter="config")
    joined = columns[0] if len(columns) == 1 else columns[0].str.cat(columns[1:], sep=SEPARATOR)
    return spec.table + SEPARATOR + joined


def event_hierarchy(tables: Sequence[EventColumns], observed: Sequence[str]) -> Hierarchy:
    """The in-step hierarchy of the event codes ``observed`` (ground labels, see ``event_labels``)
    over every table's columns, under ``ROOT`` (see the module docstring)."""
    by_table = {t.table: t for t in tables}
    height = max((h.height for t in tables for h in t.hierarchies), default=0)
    rows = []
    for ground in dict.fromkeys(observed):
        table, values = split_label(ground)
        spec = by_table[table]
        codes = [h.index[v] for h, v in zip(spec.hierarchies, values, strict=True)]
        levels = [_label(table, [h.labels[min(j, h.height)][h.codes[min(j, h.height)][c]]
                                 for h, c in zip(spec.hierarchies, codes, strict=True)])
                  for j in range(1, height + 1)]
        rows.append((ground, *levels, ROOT))
    if not rows:
        rows = [(_label(tables[0].table, [h.ground[0] for h in tables[0].hierarchies]),) + (ROOT,) * (height + 1)]
    names = ("as is", *(f"level {j}" for j in range(1, height + 1)), ROOT)
    return Hierarchy("events", tuple(rows), names)
