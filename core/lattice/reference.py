"""The distribution t-closeness is measured against, and what a release report says of it.

t-closeness (Li, Li & Venkatasubramanian, ICDE 2007) bounds the Earth Mover's Distance (EMD)
between each equivalence class's distribution of the sensitive attribute and the *whole table's*.
The whole table is the input, before suppression (the paper's and ARX's reading): the released
file's own distribution differs once classes are suppressed, so a reader recomputing from the file
finds other distances, and a class at 0.4967 against the input may sit at 0.5031 against the file (adult, README).

The input's counts minus the released file's are the sensitive values of the suppressed rows, so
by default the report's ``reference_distribution`` (``stated_section``) names the distribution,
says how many classes exceed t against it (verified by the program, from the input in memory; not
the worst distance, which with the file solves for the counts) and gives the worst class against
the file's own distribution (anyone can recompute it from the file: over the values the file
holds). On request (``OutputOptions.publish_reference``) it adds the input's counts in the EMD's
order (``reference_section``) and the worst distance against them, with a note saying what they
disclose; the re-check on the written file then measures against those very counts.
``.reference_check`` re-checks a release from its report and file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from microrelease.core.criteria.criterion import Statistic
from microrelease.core.exceptions import VerificationError
from microrelease.core.models.privacy_model import TOLERANCE
from microrelease.core.models.sensitive import value_order

DISTRIBUTION = "input"  # the only reference there is: the input table's, before suppression
DESCRIPTION = ("the input table's distribution of the sensitive attribute, before suppression (as Li et al. "
               "define t-closeness and ARX measures it)")
DISCLOSURE = ("these counts are the input's distribution of the sensitive attribute, published on request so that "
              "the claim can be checked from the released file; they disclose the suppressed rows: these counts minus "
              "the released file's counts are the sensitive values of the suppressed rows (exactly, when few rows are "
              "suppressed)")
WITHHELD = ("the input's counts are not published: minus the released file's counts they would give the sensitive "
            "values of the suppressed rows. The worst class against the input's distribution was verified by the "
            "program when it wrote the file; the figures against the released file's own distribution can be "
            "recomputed from the file alone")


def table_wide(models: Sequence) -> tuple:
    """The models measured against a table-wide distribution (t-closeness's EMD reference)."""
    return tuple(m for m in models if Statistic.TABLE_DISTRIBUTION in m.needs())


def emd_values(labels: Sequence[str], model) -> list[str]:
    """The sensitive values in the order the EMD reads them: the hierarchy's leaf order for a
    hierarchical ground, else the value order of the attribute (numeric when every value is a number)."""
    hierarchy = getattr(model, "hierarchy", None)
    if getattr(model, "ground", "") == "hierarchical" and hierarchy is not None:
        return sorted(labels, key=hierarchy.index.__getitem__)
    return list(labels)


def reference_section(sensitive, models: Sequence) -> dict | None:
    """The report's ``reference_distribution`` for ``models`` on ``sensitive`` (a SensitiveFrequency),
    or None when no model reads a table-wide distribution."""
    wide = table_wide(models)
    if not wide:
        return None
    counts = dict(zip(sensitive.labels, (int(n) for n in sensitive.table_counts), strict=True))
    values = emd_values(sensitive.labels, wide[0])
    section = {"distribution": DISTRIBUTION, "description": DESCRIPTION, "attribute": sensitive.attribute,
               "order": _order_name(wide[0]), "values": values, "counts": [counts[v] for v in values],
               "total": sum(counts.values()), "published": True, "note": DISCLOSURE}
    hierarchy = getattr(wide[0], "hierarchy", None)
    if getattr(wide[0], "ground", "") == "hierarchical" and hierarchy is not None:
        kept = set(values)  # the leaves the data holds: a leaf of mass 0 moves no earth
        section["hierarchy"] = [list(row) for row in hierarchy.rows if row[0] in kept]
    return section


def stated_section(section: Mapping, held: Sequence[str], publish: bool) -> dict:
    """What the report states of the in-memory ``section``: all of it when ``publish``, else which
    distribution and the order, with no value or count (and a hierarchy's rows for the values the
    file holds, ``held``, only: what a reader needs to recompute the file's own figures)."""
    if publish:
        return dict(section)
    stated = {key: section[key] for key in ("distribution", "description", "attribute", "order")}
    stated |= {"published": False, "note": WITHHELD}
    if "hierarchy" in section:
        stated["hierarchy"] = [row for row in section["hierarchy"] if row[0] in set(held)]
    return stated


def _order_name(model) -> str:
    if getattr(model, "ground", "") == "hierarchical":
        return "the hierarchy's leaf order"
    return "value order (numeric when every value is a number, else text)"


def reference_table(section: Mapping, labels: Sequence[str]) -> np.ndarray:
    """The section's counts in ``labels``' column order; a value of ``labels`` it lacks is refused by name."""
    counts = dict(zip(section["values"], section["counts"], strict=True))
    absent = [v for v in labels if v not in counts]
    if absent:
        raise VerificationError(f"reference distribution of {section['attribute']!r}: value {absent[0]!r} of the "
                                "released file is not in it")
    return np.array([counts[v] for v in labels], dtype=float)


def reference_faults(section: Mapping, file_counts: Mapping[str, float], input_rows: int) -> list[str]:
    """Why ``section`` cannot be the input's distribution of a file holding ``file_counts`` rows of each
    value: counts and total disagree, the total is not the input's rows, or a value is counted below
    the released rows that hold it. Empty when it can be."""
    name = f"reference distribution of {section['attribute']!r}"
    counts = dict(zip(section["values"], section["counts"], strict=True))
    faults = []
    if sum(counts.values()) != section["total"]:
        faults.append(f"{name}: its counts sum to {sum(counts.values())}, its total says {section['total']}")
    if section["total"] != input_rows:
        faults.append(f"{name}: total {section['total']} is not the input's {input_rows} rows")
    for value, n in file_counts.items():
        if n > counts.get(value, 0):
            faults.append(f"{name}: count {counts.get(value, 0)} of {value!r} is below the {int(n)} released rows "
                          "holding it")
    return faults


def own_distances(model, class_counts: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Each class's EMD to the released file's own distribution, over the values the file holds
    (``labels``: the columns' values): a value only suppressed rows held would change the ordered
    distance's ranks, and a reader of the file cannot know of it."""
    held = class_counts.sum(axis=0) > 0
    values = [v for v, h in zip(labels, held, strict=True) if h]
    counts = class_counts[:, held]
    if model.ground == "ordered":
        order = value_order(values)
        counts = counts[:, [values.index(v) for v in order]]
    elif model.ground == "hierarchical":
        model = dataclasses.replace(model, order=tuple(model.hierarchy.index[v] for v in values))
    return model.statistic(counts, counts.sum(axis=0))


def worst_figures(model, class_counts: np.ndarray, labels: Sequence[str], reference: np.ndarray,
                  publish: bool = True) -> dict:
    """The worst class against the reference and against the file's own distribution, for the report.
    Unless the counts are published, the worst class against the reference is left out (how many
    classes exceed t against it stays): with the file it solves for the counts (two values: the
    EMD is |p₁ − q₁|, so q₁ = p₁ ± the figure)."""
    against, own = model.statistic(class_counts, reference), own_distances(model, class_counts, labels)
    limit = model.t + TOLERANCE
    return {"t": model.t, "classes": len(class_counts),
            "worst_vs_reference": float(against.max(initial=0.0)),
            "worst_vs_released_file": float(own.max(initial=0.0)),
            "failing_vs_reference": int((against > limit).sum()),
            "failing_vs_released_file": int((own > limit).sum())} | (
        {} if publish else {"worst_vs_reference": None})


def figures_line(figures: Mapping) -> str:
    """One line with both figures (the verification's and the command line's)."""
    own = (f"{figures['worst_vs_released_file']:.6g} against the released file's own "
           f"({figures['failing_vs_released_file']} of {figures['classes']} classes over t against it)")
    if figures["worst_vs_reference"] is None:
        return (f"{figures['failing_vs_reference']} of {figures['classes']} classes over t against the input's "
                f"distribution (its worst figure unpublished), worst class {own}")
    return f"worst class {figures['worst_vs_reference']:.6g} against the input's distribution, {own}"
