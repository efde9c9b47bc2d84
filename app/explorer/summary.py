"""The line above the tabs: the question, the k-minimal nodes and the preferred one."""

from __future__ import annotations

import panel as pn
import param

from microrelease.app.explorer.state import Explorer

SHOWN = 40  # k-minimal vectors spelled out; more are counted


def summary_text(e: Explorer) -> str:
    """One paragraph for the page, with stable element ids the browser tests read."""
    if e.answer is None:
        return "No data loaded."
    kmin = e.k_minimal_vectors()
    pref = "none" if e.preferred is None else str(list(e.lattice.node(e.preferred)))
    shown = " ".join(str(v) for v in kmin[:SHOWN]) + (f" … (+{len(kmin) - SHOWN})" if len(kmin) > SHOWN else "")
    return (
        f"**k = <span id='k'>{e.k}</span>, MaxSup = <span id='max-sup'>{e.max_sup}</span> rows** "
        f"({e.max_sup / e.dataset.n_rows:.2%}) · {int(e.answer.satisfying.sum())} of "
        f"{e.lattice.size} nodes satisfy · <span id='n-kmin'>{len(kmin)}</span> k-minimal: "
        f"<span id='kmin'>{shown}</span> · preferred ({e.policy}): <span id='preferred'>{pref}</span>"
        + (f" · models: <span id='models'>{', '.join(m.describe() for m in e.profile.models)}</span> "
           f"on {e.sensitive_attribute}" if e.profile.models else "")
        + (f"\n\n⚠ {e.message}" if e.message else "")
    )


class Summary(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self.text = pn.pane.Markdown(summary_text(self.state), css_classes=["summary"], sizing_mode="stretch_width")
        self.state.param.watch(lambda *_: setattr(self.text, "object", summary_text(self.state)),
                               ["answer", "preferred"])  # a new policy always sets a new answer

    def __panel__(self):
        return self.text
