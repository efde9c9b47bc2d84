"""The sidebar: k, MaxSup (rows and %), preference policy and weights, privacy models, lattice view mode."""

from __future__ import annotations

import panel as pn
import param

from microrelease.app.explorer.state import Explorer
from microrelease.core import POLICIES


class Sidebar(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        e = self.state
        self._syncing = False
        self.k_slider = pn.widgets.IntSlider.from_param(e.param.k, label="k", end=min(100, e.param.k.bounds[1] or 100),
                                                        css_classes=["k-slider"])
        self.k_input = pn.widgets.IntInput.from_param(e.param.k, label="k (exact)", css_classes=["k-input"])
        self.sup_rows = pn.widgets.IntInput.from_param(e.param.max_sup, label="MaxSup (rows)", css_classes=["maxsup-rows"])
        self.sup_pct = pn.widgets.FloatInput(label="MaxSup (% of rows)", value=0.0, start=0, end=100, step=0.5,
                                             css_classes=["maxsup-pct"])
        self.policy = pn.widgets.Select.from_param(e.param.policy, label="Preference policy",
                                                   options={p.label: n for n, p in POLICIES.items()})
        self.weights = pn.Column()
        self.view = pn.widgets.RadioButtonGroup.from_param(e.param.view, label="Lattice view")
        self.fixed = pn.Column()
        self.expand = pn.widgets.Button(label="Show neighbours of selected node")
        self.reset = pn.widgets.Button(label="Reset expansions")
        self.sensitive = pn.widgets.Select.from_param(e.param.sensitive_attribute, label="Sensitive attribute",
                                                      css_classes=["sensitive-select"])
        self.l_kind = pn.widgets.Select.from_param(e.param.l_kind, label="l-diversity", css_classes=["l-kind"])
        self.l_value = pn.widgets.FloatInput.from_param(e.param.l, label="l", step=1, css_classes=["l-value"])
        self.c_value = pn.widgets.FloatInput.from_param(e.param.c, label="c (recursive)", step=0.5)
        self.t_value = pn.widgets.FloatInput.from_param(e.param.t, label="t-closeness t (0 = off)", step=0.05,
                                                        css_classes=["t-value"])
        self.ground = pn.widgets.Select.from_param(e.param.ground, label="EMD ground distance")
        self.expand.on_click(lambda _: e.expand_selected())
        self.reset.on_click(lambda _: setattr(e, "expanded", []))
        self.sup_pct.param.watch(self._pct_to_rows, "value")
        e.param.watch(lambda ev: self._show_pct(ev.new), ["max_sup"])
        e.param.watch(self._rebuild, ["profile"])
        e.param.watch(lambda ev: setattr(self.weights, "visible", POLICIES[ev.new].uses_weights), ["policy"])
        self._rebuild()

    def _pct_to_rows(self, event) -> None:
        if not self._syncing:  # else the % box is only echoing a change of the rows box
            self.state.max_sup_share(event.new)

    def _show_pct(self, rows: int) -> None:
        self._syncing = True
        try:
            self.sup_pct.value = round(100 * rows / self.state.dataset.n_rows, 3)
        finally:
            self._syncing = False

    def _rebuild(self, *_) -> None:
        e = self.state
        if e.dataset is None:
            return
        self.k_slider.end = min(100, e.dataset.n_rows)
        self._show_pct(e.max_sup)
        boxes = []
        for q in e.dataset.quasi_identifiers:
            box = pn.widgets.FloatInput(label=f"weight of {q}", value=float(e.weights.get(q, 1.0)), start=0, step=0.5)
            box.param.watch(lambda ev, q=q: setattr(e, "weights", {**e.weights, q: ev.new}), "value")
            boxes.append(box)
        self.weights.objects = boxes
        self.weights.visible = POLICIES[e.policy].uses_weights
        selects = []
        for q, h in zip(e.dataset.quasi_identifiers, e.dataset.hierarchies, strict=True):
            options = {"free": -1, **{f"{j}: {name}": j for j, name in enumerate(h.level_names)}}
            sel = pn.widgets.Select(label=f"fix {q}", options=options, value=e.fixed.get(q, -1))
            sel.param.watch(lambda ev, q=q: e.fix(q, ev.new), "value")
            selects.append(sel)
        self.fixed.objects = selects

    def __panel__(self):
        return pn.Column(
            "### Question", self.k_slider, self.k_input, self.sup_rows, self.sup_pct, self.policy, self.weights,
            "### Attribute disclosure", self.sensitive, self.l_kind, self.l_value, self.c_value, self.t_value,
            self.ground,
            "### Lattice view", self.view, self.expand, self.reset,
            pn.pane.Markdown("Sub-lattice: fix some QIs at a level", margin=(10, 5, 0, 5)), self.fixed,
            width=300,
        )
