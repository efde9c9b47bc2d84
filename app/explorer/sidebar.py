"""The sidebar: step 2 of the page, the question (k, MaxSup in rows and %, preference policy and
weights, privacy models), and the lattice view mode. It shows only the sections of the tab in view
(``Sidebar.show``, driven by the tab registry's ``sidebar`` entries): the tabs with their own k
must not have a second k on screen beside theirs.

The privacy criteria's boxes are generated from the core's registry, one group per API parameter
(``criteria_params``), placed in the section of what the criterion reads.
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn
import param

from microrelease.app.explorer.criteria_params import groups
from microrelease.app.explorer.explorer import Explorer
from microrelease.app.text import shown
from microrelease.core import POLICIES
from microrelease.core.criteria.controls import Control
from microrelease.core.criteria.criterion import Scope, Statistic

QUESTION, LATTICE_VIEW = "question", "lattice-view"  # the sections a tab can ask for

# The sections of the criteria's groups, by what a criterion reads (first that applies); a group none
# takes goes to the last
SECTIONS = (
    ("attribute", "#### Privacy models (attribute disclosure)", {"needs": Statistic.VALUE_COUNTS}),
    ("k-map", "#### k-map (a population table)", {"needs": Statistic.POPULATION_SIZE}),
    ("risk", "#### Risk-based privacy models (re-identification)", {"scope": Scope.RELEASE}),
)
OTHER = ("other", "#### Other privacy criteria")


class ValidatedIntInput(pn.widgets.IntInput):
    """An IntInput whose bounds the server checks. Given the bounds, Bokeh's spinner silently keeps its
    old value while still showing what was typed (k "9999" on screen, k = 2 in force); without them
    the value reaches the server, which says what is wrong and puts the box back.

    A value is applied at once: Panel otherwise waits 50 ms for more events, 50 ms of every k change.
    The price: each step of the box's arrows is a question answered and drawn (holding an arrow key
    queues them); the k slider is there for scanning."""

    _rename = {"start": None, "end": None}
    _debounce = 0


class ValidatedFloatInput(pn.widgets.FloatInput):
    """A FloatInput whose bounds the server checks (see ``ValidatedIntInput``)."""

    _rename = {"start": None, "end": None}
    _debounce = 0


def css_class(control: Control) -> str:
    """The CSS class of a control's widget (the browser tests find it by it): its name with dashes, and
    ``-value`` for a number box (``l-kind``, ``ground``; ``l-value``, ``t-value``, ``max-risk-value``)."""
    return control.name.replace("_", "-") + ("" if control.choices else "-value")


def bounds_text(start, end) -> str:
    if start is None and end is None:
        return "any number"
    if end is None:
        return f"at least {start:,}"
    return f"from {start:,} to {end:,}"


class Sidebar(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        e = self.state
        self._syncing = False
        self.k_slider = pn.widgets.IntSlider.from_param(e.param.k, label="k", end=min(100, e.param.k.bounds[1] or 100),
                                                        css_classes=["k-slider"])
        self.k_input = ValidatedIntInput(label="k (exact)", value=e.k, css_classes=["k-input"],
                                       description=e.param.k.doc)
        self.sup_rows = ValidatedIntInput(label="MaxSup (rows)", value=e.max_sup, css_classes=["maxsup-rows"])
        self.sup_pct = ValidatedFloatInput(label="MaxSup (% of rows)", value=0.0, start=0, end=100, step=0.5,
                                         css_classes=["maxsup-pct"])
        self.input_message = pn.pane.Alert(alert_type="warning", visible=False, css_classes=["input-message"],
                                           sizing_mode="stretch_width")
        self.policy = pn.widgets.Select.from_param(e.param.policy, label="Preference policy",
                                                   options={p.label: n for n, p in POLICIES.items()},
                                                   css_classes=["policy-select"])
        self.weights = pn.Column()
        self.view = pn.widgets.RadioButtonGroup.from_param(e.param.view, label="Lattice view")
        self.fixed = pn.Column()
        self.expand = pn.widgets.Button(label="Show neighbours of selected node")
        self.reset = pn.widgets.Button(label="Reset expansions")
        self.sensitive = pn.widgets.Select.from_param(e.param.sensitive_attribute, label="Sensitive attribute",
                                                      css_classes=["sensitive-select"])
        # The privacy criteria: one group of boxes per registry parameter (k aside: the slider's), each box
        # an Explorer parameter of the control's name (``self.boxes``), its number boxes checked as k's
        self.boxes: dict[str, pn.widgets.Widget] = {}
        self.groups = {parameter: pn.Column(*(self._box(c) for c in group.every), margin=0,
                                            css_classes=["criterion-" + parameter.replace("_", "-")])
                       for parameter, group in groups().items()}
        self.model_progress = pn.indicators.Progress(value=0, max=100, width=280, visible=False,
                                                     css_classes=["model-progress"])
        self.cancel = pn.widgets.Button(label="Cancel", visible=False, css_classes=["model-cancel"])
        self.cancel.on_click(lambda _: e.cancel_profile())
        # k-map against a population table: enabled only when the dataset's population is known
        self.k_map_note = pn.pane.Markdown(css_classes=["k-map-note"], sizing_mode="stretch_width")
        self.expand.on_click(lambda _: e.expand_selected())
        self.reset.on_click(lambda _: setattr(e, "expanded", []))
        self._validate_box(self.k_input, "k", lambda: e.k, lambda v: setattr(e, "k", v))
        self._validate_box(self.sup_rows, "MaxSup (rows)", lambda: e.max_sup, lambda v: setattr(e, "max_sup", v))
        self._validate_box(self.sup_pct, "MaxSup (% of rows)", lambda: self._pct(e.max_sup), e.max_sup_share)
        e.param.watch(self._show_population, ["population_name"])
        e.param.watch(lambda ev: self._set(self.k_input, ev.new), ["k"])
        e.param.watch(lambda ev: self._show_max_sup(ev.new), ["max_sup"])
        e.param.watch(self._bounds, ["k", "max_sup"], what="bounds")
        e.param.watch(self._rebuild, ["dataset"])  # per-QI boxes: not on a privacy model's new profile
        e.param.watch(lambda ev: setattr(self.weights, "visible", POLICIES[ev.new].uses_weights), ["policy"])
        e.param.watch(self._show_model_progress, ["model_progress", "model_running", "search_progress", "searching"])
        e.param.watch(self._show_large, ["large"])
        # What reads the whole-lattice profile: hidden on a large lattice (the pruned search answers k-anonymity)
        sections = self._sections()
        self.attribute_models = pn.Column(sections["attribute"][0], self.sensitive, *sections["attribute"][1:],
                                          margin=0)
        self.k_map_models = pn.Column(*sections["k-map"], self.k_map_note, margin=0)
        self.risk_models = pn.Column(*sections["risk"], margin=0)
        self.other_models = pn.Column(*sections["other"], margin=0, visible=len(sections["other"]) > 1)
        self.large_note = pn.pane.Markdown(css_classes=["large-note"], sizing_mode="stretch_width", visible=False)
        self.question = pn.Column(
            "### 2 · Question", self.k_slider, self.k_input, self.input_message, self.sup_rows, self.sup_pct,
            self.policy, self.weights, self.attribute_models, self.k_map_models, self.model_progress, self.cancel, self.large_note,
            self.risk_models, self.other_models, css_classes=["sidebar-question"])
        self.view_modes = pn.Column(
            self.view, self.expand, self.reset,
            pn.pane.Markdown("Sub-lattice: fix some QIs at a level", margin=(10, 5, 0, 5)), self.fixed, margin=0)
        self.view_note = pn.pane.Markdown("The evaluated frontier: the nodes the pruned search evaluated (the "
                                          "caption says which).", visible=False, margin=(0, 5))
        self.lattice_view = pn.Column(
            "### Lattice view", self.view_modes, self.view_note, css_classes=["sidebar-lattice-view"])
        self.elsewhere = pn.pane.Markdown(
            "**2 · Question** (k, MaxSup, policy, privacy models) is asked here on the tabs that answer it: "
            "3 Explore, 4 Decide and Teaching.", css_classes=["sidebar-note"], visible=False)
        self._bounds()
        self._rebuild()
        self._show_population()
        self._show_large()
        self._show_model_progress()

    # --- the privacy criteria's generated boxes ------------------------------------------------------
    def _box(self, control: Control) -> pn.widgets.Widget:
        """The widget of one control, bound to the Explorer's parameter of its name: a select for a choice,
        else a number box whose bounds the server checks (``_check``), showing the value in force."""
        e, name = self.state, control.name
        if control.choices:
            box = pn.widgets.Select.from_param(e.param[name], label=control.label, css_classes=[css_class(control)])
        else:
            kind = ValidatedIntInput if control.kind is int else ValidatedFloatInput
            box = kind(label=control.label, value=getattr(e, name), start=control.low, end=control.high,
                       step=control.step or 1, css_classes=[css_class(control)], description=control.doc or None)
            self._validate_box(box, name, lambda: getattr(e, name), lambda v: setattr(e, name, v))
            e.param.watch(lambda ev: self._set(box, ev.new), [name])
        self.boxes[name] = box
        return box

    def _sections(self) -> dict[str, list]:
        """Each section's heading, then its groups (registry order): a group goes to the first section
        whose filter of the registry takes it (``SECTIONS``), else to the last (``OTHER``)."""
        sections, placed = {}, set()
        for key, heading, which in SECTIONS:
            taken = [p for p in groups(**which) if p not in placed]
            placed.update(taken)
            sections[key] = [heading, *(self.groups[p] for p in taken)]
        sections[OTHER[0]] = [OTHER[1], *(g for p, g in self.groups.items() if p not in placed)]
        return sections

    # --- the question's number boxes: bounds checked on the server, with a message -------------------
    def _validate_box(self, box, name: str, current: Callable[[], float], apply: Callable[[float], None]) -> None:
        def validate(event) -> None:
            if self._syncing:
                return
            value, start, end = event.new, box.start, box.end
            typed = "an empty box" if value is None else shown(value)

            def refuse(rule: str) -> None:
                self.input_message.object = f"**{name}** must be {rule}: {typed} was not applied; {name} stays {current():,}."
                self.input_message.visible = True
                self._set(box, current())

            if value is None or (start is not None and value < start) or (end is not None and value > end):
                return refuse(bounds_text(start, end))
            try:
                apply(value)
            except ValueError:  # the one rule the bounds cannot say: c > 0 (the box's start is excluded)
                return refuse(f"greater than {start:,}")
            self.input_message.visible = False

        box.param.watch(validate, "value")

    def _set(self, box, value) -> None:
        """Show ``value`` in ``box`` without applying it again."""
        self._syncing = True
        try:
            box.value = value
        finally:
            self._syncing = False

    def _bounds(self, *_) -> None:
        e = self.state
        self.k_input.start, self.k_input.end = e.param.k.bounds
        self.sup_rows.start, self.sup_rows.end = e.param.max_sup.bounds

    def _pct(self, rows: int) -> float:
        return round(100 * rows / self.state.dataset.n_rows, 3) if self.state.dataset is not None else 0.0

    def _show_max_sup(self, rows: int) -> None:
        self._set(self.sup_rows, rows)
        self._set(self.sup_pct, self._pct(rows))

    def _show_model_progress(self, *_) -> None:
        e = self.state
        self.model_progress.value = int(100 * (e.search_progress if e.searching else e.model_progress))
        self.model_progress.visible = self.cancel.visible = bool(e.model_running or e.searching)

    def _show_large(self, *_) -> None:
        """On a large lattice: no view modes (they read every node's figures); a line says what answers
        instead (the privacy models, k-map and the risk limits go to the pruned search with the question)."""
        large = self.state.large
        self.view_modes.visible = not large
        self.large_note.visible = self.view_note.visible = large
        if large:
            self.large_note.object = (
                f"<span id='large-note'>**Large lattice** ({self.state.lattice.size:,} nodes): answered by the pruned "
                "search, one question at a time, under the privacy models, k-map and risk limits asked here (a "
                "progress bar and Cancel while it runs).</span>")

    def _show_population(self, *_) -> None:
        name = self.state.population_name
        self.boxes["k_map"].disabled = not name
        self.k_map_note.object = (
            f"Each released class needs K records in the population {shown(name)} (k still applies to the sample)."
            if name else "Needs a population table: the adult-sample sample, or `microrelease app DATA ... "
                         "--population FILE`.")

    def _rebuild(self, *_) -> None:
        e = self.state
        if e.dataset is None:
            return
        self.k_slider.end = min(100, e.dataset.n_rows)
        self._show_max_sup(e.max_sup)
        boxes = []
        for q in e.dataset.quasi_identifiers:
            box = ValidatedFloatInput(label=f"weight of {q}", value=float(e.weights.get(q, 1.0)), start=0, step=0.5)
            self._validate_box(box, f"weight of {q}", lambda q=q: e.weights.get(q, 1.0),
                        lambda v, q=q: setattr(e, "weights", {**e.weights, q: v}))
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

    # --- which sections the tab in view uses ---------------------------------------------------------
    def show(self, sections: tuple[str, ...]) -> None:
        """Show only ``sections`` (QUESTION, LATTICE_VIEW); a tab without any gets a note saying where the
        question went, so that no second k stands beside the tab's own."""
        self.question.visible = QUESTION in sections
        self.lattice_view.visible = LATTICE_VIEW in sections
        self.elsewhere.visible = not sections
        if QUESTION not in sections:
            self.input_message.visible = False

    def __panel__(self):
        return pn.Column(self.question, self.lattice_view, self.elsewhere, width=300)
