"""The lines above the tabs: the question, what satisfies it, the preferred node and the k-minimal ones.

A vector is read with its level names (``[1, 1] = Race: level 1 (all: person), ZIP: ...``); the
k-minimal list folds away under a ``<details>`` so the first line stays one line. Level names come
from hierarchy files, so every name goes through ``shown``.
"""

from __future__ import annotations

from collections.abc import Sequence

import panel as pn
import param

from microrelease.app.explorer.explorer import Explorer
from microrelease.app.text import shown, shown_html
from microrelease.core.lattice.hierarchies import Hierarchy, describe_levels, describe_vector

INLINE = 5  # k-minimal vectors spelled on the folded line; more are counted
LISTED = 40  # k-minimal vectors named in the unfolded table; more are counted


def summary_text(e: Explorer) -> str:
    """Markdown for the page, with stable element ids the browser tests read:
    #k, #max-sup, #n-kmin, #kmin (space-separated vectors), #preferred (a vector) and #models (k-map: 'K-map')."""
    if e.answer is None:
        return f"Searching the lattice of {e.lattice.size:,} nodes…" if e.large else "No data loaded."
    kmin = e.k_minimal_vectors()
    hierarchies = e.dataset.hierarchies
    if e.preferred is None:
        pref = "<span id='preferred'>none</span>"
    else:
        vector = list(e.lattice.node(e.preferred))
        pref = f"<span id='preferred'>{vector}</span> = {shown(describe_vector(hierarchies, vector))}"
    models = ""
    if e.applied_k_map is not None:
        population = e.applied_k_map.population
        described = ", ".join(m.describe() for m in (*e.applied_models, e.applied_k_map))  # k-map beside models too
        models = (f" · models: <span id='models'>{shown(described)}</span> against the population "
                  f"{shown(e.population_name)} ({population.n_rows:,} rows)")
    elif e.large and e.answer.described:  # the pruned search's criteria beside k
        on = f" on {shown(e.sensitive_attribute)}" if e.applied_models else ""
        models = f" · criteria: <span id='models'>{shown(', '.join(e.answer.described))}</span>{on}"
    elif e.profile is not None and e.profile.models:
        described = ", ".join(m.describe() for m in e.profile.models)
        models = f" · models: <span id='models'>{shown(described)}</span> on {shown(e.sensitive_attribute)}"
    head = (
        f"**k = <span id='k'>{e.k}</span>, MaxSup = <span id='max-sup'>{e.max_sup}</span> rows** "
        f"({e.max_sup / e.dataset.n_rows:.2%}) · {int(e.answer.satisfying.sum()):,} of {e.lattice.size:,} nodes "
        f"satisfy · <span id='n-kmin'>{len(kmin)}</span> k-minimal · preferred (<span id='policy'>{e.policy}</span>): {pref}{models}"
    )
    return head + "\n\n" + kmin_details(kmin, hierarchies) + (f"\n\n⚠ {shown(e.message)}" if e.message else "")


def kmin_details(kmin: list[list[int]], hierarchies: Sequence[Hierarchy]) -> str:
    """The k-minimal vectors on one folded line; unfolded, a table of their level names, one column per QI."""
    inline = " ".join(str(v) for v in kmin[:INLINE]) + (f" … (+{len(kmin) - INLINE})" if len(kmin) > INLINE else "")
    # the <summary> line is raw HTML (no Markdown inside an HTML block): it holds only numbers
    folded = f"<details class='kmin-list'><summary>k-minimal: <span id='kmin'>{inline}</span></summary>"
    if not kmin:
        return folded + "</details>"
    # the table as HTML in the same block (no blank line): Markdown would take ~70 ms a k change to parse it
    cells = "".join(f"<th>{shown_html(h.attribute)}</th>" for h in hierarchies)
    rows = "".join(f"<tr><td>{v}</td>" + "".join(f"<td>{shown_html(name)}</td>"
                                                 for name in describe_levels(hierarchies, v).values()) + "</tr>"
                   for v in kmin[:LISTED])
    more = f"<p>… and {len(kmin) - LISTED} more</p>" if len(kmin) > LISTED else ""
    return f"{folded}<table><thead><tr><th>vector</th>{cells}</tr></thead><tbody>{rows}</tbody></table>{more}</details>"


class Summary(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self.text = pn.pane.Markdown(summary_text(self.state), css_classes=["summary"], sizing_mode="stretch_width")
        self.state.param.watch(lambda *_: setattr(self.text, "object", summary_text(self.state)),
                               ["answer", "preferred"])  # a new policy always sets a new answer

    def __panel__(self):
        return self.text
