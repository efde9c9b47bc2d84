"""The microaggregation tab: MDAV-ID, MDAV-SWAP and IR-SWAP side by side as k varies; preview and
download of the chosen release (the same files as ``microrelease microaggregate``)."""

from __future__ import annotations

import io

import holoviews as hv
import panel as pn
import param

from microrelease.app.style import BOUND, CANVAS, MARKER
from microrelease.app.tabs.microaggregation.microaggregation_state import FILE, REPORT, MicroaggregationState

RISK_TITLES = {"linkage": "Records re-identified by linkage",
               "learned": "Confidential values learned right through the link"}
METHOD_COLORS = {"mdav-id": "#1f77b4", "mdav-swap": "#2ca02c", "ir-swap": "#d62728"}


def summary_text(s: MicroaggregationState) -> str:
    f = s.figures
    learned = "" if f["learned"] is None else f"; confidential values learned **{f['learned']:.3f}**"
    return (f"**{s.method}**, k = {s.k} on {s.description()}: "
            f"SSE/SST **{f['sse_sst']:.2f} %**; records re-identified by linkage "
            f"**{f['linkage']:.3f}** (bound 1/k = {f['bound']:.3f}){learned}.")


class MicroaggregationView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=MicroaggregationState)

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        self.sample = pn.widgets.Select.from_param(s.param.sample, css_classes=["micro-sample"])
        self.method = pn.widgets.RadioButtonGroup.from_param(s.param.method, css_classes=["micro-method"])
        self.k = pn.widgets.IntInput.from_param(s.param.k, label="k", css_classes=["micro-k"], width=120)
        self.risk = pn.widgets.RadioButtonGroup.from_param(s.param.risk, css_classes=["micro-risk"],
                                                           options={"records re-identified": "linkage",
                                                                    "confidential values learned": "learned"})
        self.note = pn.pane.Markdown(summary_text(s), css_classes=["micro-summary"], sizing_mode="stretch_width")
        self.preview = pn.widgets.Tabulator(s.preview(), pagination="local", page_size=10, disabled=True,
                                            sizing_mode="stretch_width", css_classes=["micro-preview"])
        self.csv = pn.widgets.FileDownload(callback=lambda: io.BytesIO(s.files()[0]), filename=FILE,
                                           label="Download CSV", color="primary", css_classes=["micro-download"])
        self.report = pn.widgets.FileDownload(callback=lambda: io.BytesIO(s.files()[1]), filename=REPORT,
                                              label="Download report", css_classes=["micro-report"])
        s.param.watch(self._refresh, ["figures"])

    def _refresh(self, *_) -> None:
        self.note.object = summary_text(self.state)
        self.preview.value = self.state.preview()

    @param.depends("state.sample", "state.method", "state.k", "state.risk")
    def plots(self):
        data = self.state.curves()
        loss, risk = [], []
        for method in self.state.param.method.objects:
            rows = data[data["method"] == method]
            style = {"color": METHOD_COLORS[method], "line_width": 3 if method == self.state.method else 1.5}
            loss.append(hv.Curve(rows, "k", "sse_sst", label=method).opts(**style))
            risk.append(hv.Curve(rows, "k", self.state.risk, label=method).opts(**style))
        bound = data[data["method"] == "mdav-id"]
        risk.append(hv.Curve(bound, "k", "bound", label="1/k").opts(**BOUND))
        marker = hv.VLine(self.state.k).opts(**MARKER)
        common = {"responsive": True, "height": 300, "shared_axes": False, "framewise": True,
                  "legend_position": "right", "backend_opts": CANVAS}
        return pn.Row(
            (hv.Overlay(loss) * marker).opts(title="Information loss SSE/SST (%)", ylabel="SSE/SST %", **common),
            (hv.Overlay(risk) * marker).opts(title=RISK_TITLES[self.state.risk], ylabel="share", **common),
            sizing_mode="stretch_width", css_classes=["micro-plots"],
        )

    def __panel__(self):
        return pn.Column(
            "### Microaggregation: numbers stay numbers",
            pn.pane.Markdown("MDAV forms groups of at least k similar records. **MDAV-ID** replaces their QIs by the "
                             "group mean (k-anonymity); **MDAV-SWAP** permutes the QI vectors inside each group, and "
                             "**IR-SWAP** permutes each confidential attribute among records of similar rank "
                             "(probabilistic k-anonymity: the values stay true, the link holds with chance about 1/k)."),
            pn.Row(self.sample, self.method, self.k, self.risk),
            self.note, self.plots, self.preview, pn.Row(self.csv, self.report),
            sizing_mode="stretch_width",
        )
