"""The relational + sequential tab: losses, patients before/after, and the three attackers against k."""

from __future__ import annotations

import holoviews as hv
import panel as pn
import param

from microrelease.app.style import BOUND, CANVAS, MARKER
from microrelease.app.tabs.sequences.sequences_state import (
    BEFORE,
    BOTH,
    CURVE_KS,
    SequencesState,
    attack_curves,
)
from microrelease.app.text import tabulator_titles


def summary_text(s: SequencesState) -> str:
    f = s.figures()
    return (f"k = {s.k} on {f['patients']} patients ({s.tables()}): every patient shares all of it, QIs "
            f"**and** the whole visit history, with at least **{f['shared'] - 1}** others; relational loss (NCP) **{f['relational_loss']:.3f}**, "
            f"sequence loss **{f['sequence_loss']:.3f}** ({f['suppressed_codes']} codes "
            f"suppressed); an attacker knowing the QIs and 2 codes in order succeeds with probability "
            f"**{f['attack']:.3f}**, one knowing the whole history with times **{f['full_knowledge']:.3f}** "
            f"(1/k = {1 / s.k:.3f}).")


ATTACKERS_NOTE = ("Each attacker knows a patient's original QIs and codes, knows that the release generalizes, "
                  "suppresses and merges, and picks at random among the released patients that fit what it knows "
                  "with the least loss; success is the chance it picks the right one, averaged over all patients. "
                  "*Before*: against the original data. Whatever the attacker knows, the release of both parts "
                  "keeps it at or below 1/k.")


class SequencesView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SequencesState)

    def __init__(self, **params):
        super().__init__(**params)
        self.k = pn.widgets.RadioButtonGroup.from_param(self.state.param.k, label="k", css_classes=["seq-k"])
        self.sample = pn.widgets.RadioButtonGroup.from_param(self.state.param.sample, name="sample",
                                                             css_classes=["seq-sample"])

    @param.depends("state.k", "state.sample")
    def summary(self):
        return pn.pane.Markdown(summary_text(self.state), css_classes=["seq-summary"], sizing_mode="stretch_width")

    @param.depends("state.k", "state.sample")
    def attackers(self):
        table = self.state.attackers()
        numbers = [c for c in table.columns if c != "attacker"]
        table[numbers] = table[numbers].map(lambda v: f"{v:.3f}")  # one format for every figure
        return pn.widgets.Tabulator(table, disabled=True, show_index=False, layout="fit_data_stretch",
                                    titles=tabulator_titles(table), sizing_mode="stretch_width",
                                    css_classes=["seq-attackers"])

    @param.depends("state.k", "state.sample")
    def timelines(self):
        # long histories wrap inside their cell rather than run off the page
        return pn.widgets.Tabulator(self.state.timelines(), disabled=True, show_index=False, layout="fit_columns",
                                    formatters={"before": {"type": "textarea"}, "after": {"type": "textarea"}},
                                    widths={"patient": 90}, sizing_mode="stretch_width", css_classes=["seq-timelines"])

    @param.depends("state.k", "state.sample")
    def attack_plot(self):
        # a generator: Panel runs it in a thread, so the page shows the figures at k while the eight
        # releases behind the curves are made (tens of seconds on a busy machine)
        yield pn.pane.Markdown(f"*Drawing the curves over k = {', '.join(map(str, CURVE_KS))}…*",
                               css_classes=["seq-curves-pending"])
        data = attack_curves(self.state.sample)
        curves = [hv.Curve(rows, "k", BOTH, label=name).opts(line_width=2)
                  for name, rows in data.groupby("attacker", sort=False)]
        bound = hv.Curve(data.drop_duplicates("k"), "k", "1/k", label="1/k").opts(**BOUND)
        low, high = f"{data[BEFORE].min():.2f}", f"{data[BEFORE].max():.2f}"
        before = low if low == high else f"{low} to {high}"
        yield hv.Overlay([*curves, bound, hv.VLine(self.state.k).opts(**MARKER)]).opts(
            title=f"Attack success after protecting both parts (before: {before})", ylabel="success probability",
            responsive=True, height=280, legend_position="right", shared_axes=False, framewise=True,
            backend_opts=CANVAS)

    def __panel__(self):
        return pn.Column(
            "### Relational + sequential data (patients and their visits)",
            pn.pane.Markdown("Patients are grouped by a cost over both parts; in each group the QIs (and the rows "
                             "of satellite tables such as insurance) are generalized to common values and the visit "
                             "histories (over every event table) aligned and generalized until identical. "
                             "Protecting the relational part alone leaves the visit codes to single people out."),
            self.sample, self.k, self.summary, "**Three attackers at this k**", pn.pane.Markdown(ATTACKERS_NOTE),
            self.attackers, self.attack_plot, "**Patients before and after**", self.timelines,
            sizing_mode="stretch_width",
        )
