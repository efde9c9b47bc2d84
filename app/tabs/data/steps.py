"""What each step of the Data tab needs and produced, where it stands and what to do next: plain text
from a ``DataState`` (no UI library, no HTML). The texts quote file names, column names and data
values, so the view escapes them before they reach a pane.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from microrelease.app.tabs.data.data_state import MAX_UPLOAD_BYTES, DataState, source_name

PREVIEW_ROWS = 10
PREVIEW_COLUMNS = 40  # a wider table's preview shows its first columns: a column is a Tabulator column in the page
ROLE_MENUS = 40  # up to this many columns each has its own role menu; a wider table, one searchable list per role


@dataclass(frozen=True)
class HierarchyRow:
    """One QI's hierarchy as the page lists it (``height`` None: no hierarchy yet)."""

    qi: str
    height: int | None = None
    levels: str = ""
    example: str = ""  # the first ground value up the levels
    ground: int = 0
    missing: int = 0  # distinct data values the hierarchy lacks


def hierarchy_rows(state: DataState) -> list[HierarchyRow]:
    rows = []
    for qi in state.quasi_identifiers:
        h = state.hierarchies.get(qi)
        if h is None:
            rows.append(HierarchyRow(qi))
            continue
        rows.append(HierarchyRow(qi, h.height, " → ".join(h.level_names), " → ".join(h.rows[0]), len(h.ground),
                                 len(state.missing(qi))))
    return rows


def lattice_size(state: DataState) -> int | None:
    """Nodes of the lattice the prepared data would have (None until every QI has a hierarchy)."""
    qis = state.quasi_identifiers
    if not qis or any(q not in state.hierarchies for q in qis):
        return None
    return math.prod(state.hierarchies[q].height + 1 for q in qis)


def data_step(state: DataState) -> str:
    needs = f"Needs: a bundled sample or a CSV of your own (up to {MAX_UPLOAD_BYTES / 1e6:.0f} MB)."
    if state.table is None:
        return f"{needs} Produced: nothing yet."
    rows, columns = state.table.shape
    shown = "below" if rows <= PREVIEW_ROWS else f"the first {PREVIEW_ROWS} below"
    if columns > PREVIEW_COLUMNS:
        shown += f", their first {PREVIEW_COLUMNS} columns"
    return f"{needs} Produced: {state.source}, {rows:,} rows × {columns:,} columns ({shown})."


def roles_step(state: DataState) -> str:
    by_role = {r: [c for c, role in state.roles.items() if role == r]
               for r in ("quasi-identifier", "identifier", "sensitive")}
    qis = by_role["quasi-identifier"]
    produced = (f"{len(qis)} quasi-identifier(s) ({', '.join(qis)})" if qis else "no quasi-identifier yet")
    return (f"Needs: the table's columns. Produced: {produced}, {len(by_role['identifier'])} identifier(s) "
            f"(never written out), {len(by_role['sensitive'])} sensitive.")


def hierarchies_step(state: DataState) -> str:
    rows = hierarchy_rows(state)
    if not rows:
        return "Needs: the quasi-identifiers. Produced: nothing yet (no quasi-identifier)."
    given = [r for r in rows if r.height is not None]
    gaps = [r.qi for r in given if r.missing]
    covered = f"; data values missing in {', '.join(gaps)}" if gaps else "; every data value covered" if given else ""
    return f"Needs: the quasi-identifiers. Produced: a hierarchy for {len(given)} of {len(rows)} QI(s){covered}."


def run_step(state: DataState) -> str:
    size = lattice_size(state)
    nodes = f" ({size} nodes)" if size is not None else ""
    verb = "Produced" if state.in_explorer else "Produces"
    return (f"Needs: a table with at least one quasi-identifier with a hierarchy. "
            f"{verb}: the lattice profile{nodes} the other tabs explore.")


def status_line(state: DataState) -> str:
    """The last action's outcome: a refusal, what it did, or where the run stands."""
    if state.message:
        return f"⚠ {state.message}" if state.refused else state.message
    if state.run_state == "running":
        return f"Building the profile of {state.nodes} nodes…"
    if state.run_state == "failed":
        return f"⚠ {state.error}"
    if state.run_state == "cancelled":
        return "Cancelled: the other tabs still show the data loaded before."
    if state.run_state == "loaded" and state.explorer is not None and state.explorer.dataset is not None:
        d = state.explorer.dataset
        return f"Loaded {d.n_rows} rows ({state.source}); lattice of {d.lattice.size} nodes."
    return ""


def next_step(state: DataState) -> str:
    """What to do next, from the data as it stands (and, until it runs, what the other tabs show)."""
    explored = state.explorer.dataset if state.explorer is not None else None
    step = _next_step(state)
    if explored is not None and not state.in_explorer and state.run_state != "running":
        step += f" Until then the other tabs show {source_name(explored)}."
    return step


def _next_step(state: DataState) -> str:
    if state.table is None:
        return "Next: load a bundled sample or upload a CSV."
    rows = hierarchy_rows(state)
    if not rows:
        return "Next: mark columns as quasi-identifier, give each a hierarchy, then Run."
    absent = [r.qi for r in rows if r.height is None]
    if absent:
        return f"Next: give {', '.join(absent)} a hierarchy (build one or load an ARX file), then Run."
    gaps = [r for r in rows if r.missing]
    if gaps:
        return (f"Next: extend the hierarchy of {', '.join(r.qi for r in gaps)} to every data value "
                "(the run refuses values a hierarchy lacks), then Run.")
    if state.run_state == "running":
        return "Next: wait for the profile (or cancel: the other tabs keep the data loaded before)."
    if state.in_explorer:
        return ("Done: the other tabs explore this data. Next: ask the question (k, MaxSup, privacy models) "
                "and explore the lattice.")
    return f"Next: Run to build the lattice profile ({lattice_size(state)} nodes)."
