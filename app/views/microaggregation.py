"""The microaggregation tab: MDAV-ID, MDAV-SWAP and IR-SWAP side by side as k varies; preview and
export of the chosen release (the same files as ``microrelease microaggregate``)."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import holoviews as hv
import panel as pn
import param

from microrelease.app.micro_state import MicroExplorer
from microrelease.app.views.common import CANVAS
from microrelease.core.data.samples import microdata_sample
from microrelease.core.micro.microaggregation import METHODS
from microrelease.core.micro.release import write_microaggregation

RISK_TITLES = {"linkage": "Records re-identified by linkage",
               "learned": "Confidential values learned right through the link"}
METHOD_COLORS = {"mdav-id": "#1f77b4", "mdav-swap": "#2ca02c", "ir-swap": "#d62728"}


class Microaggregation(pn.viewable.Viewer):
    state = param.ClassSelector(class_=MicroExplorer)

    def __init__(self, **params):
        params.setdefault("state", MicroExplorer())
        super().__init__(**params)
        self._cache: tuple | None = None  # (result, csv bytes, report bytes) of the last write
        s = self.state
        self.sample = pn.widgets.Select.from_param(s.param.sample, label="Data set", css_classes=["micro-sample"])
        self.method = pn.widgets.RadioButtonGroup.from_param(s.param.method, label="Method",
                                                             css_classes=["micro-method"])
        self.k = pn.widgets.IntInput.from_param(s.param.k, label="k", css_classes=["micro-k"], width=120)
        self.risk = pn.widgets.RadioButtonGroup.from_param(s.param.risk, label="Risk shown", css_classes=["micro-risk"],
                                                           options={"records re-identified": "linkage",
                                                                    "confidential values learned": "learned"})
        self.note = pn.pane.Markdown(s.summary(), css_classes=["micro-summary"], sizing_mode="stretch_width")
        self.preview = pn.widgets.Tabulator(self._preview(), pagination="local", page_size=10, disabled=True,
                                            sizing_mode="stretch_width", css_classes=["micro-preview"])
        self.csv = pn.widgets.FileDownload(callback=self._csv, filename="microaggregated.csv",
                                           label="Download CSV", color="primary", css_classes=["micro-download"])
        self.report = pn.widgets.FileDownload(callback=self._report, filename="microaggregated.report.json",
                                              label="Download report", css_classes=["micro-report"])
        s.param.watch(self._refresh, ["figures"])

    def _preview(self):
        return self.state.result.released.head(200)

    def _refresh(self, *_) -> None:
        self.note.object = self.state.summary()
        self.preview.value = self._preview()

    @param.depends("state.sample", "state.method", "state.k", "state.risk")
    def plots(self):
        data = self.state.curves()
        loss, risk = [], []
        for method in METHODS:
            rows = data[data["method"] == method]
            style = {"color": METHOD_COLORS[method], "line_width": 3 if method == self.state.method else 1.5}
            loss.append(hv.Curve(rows, "k", "sse_sst", label=method).opts(**style))
            risk.append(hv.Curve(rows, "k", self.state.risk, label=method).opts(**style))
        bound = data[data["method"] == "mdav-id"]
        risk.append(hv.Curve(bound, "k", "bound", label="1/k").opts(color="#444444", line_dash="dashed"))
        marker = hv.VLine(self.state.k).opts(color="#999999", line_dash="dotted")
        common = {"responsive": True, "height": 300, "shared_axes": False, "framewise": True,
                  "legend_position": "right", "backend_opts": CANVAS}
        return pn.Row(
            (hv.Overlay(loss) * marker).opts(title="Information loss SSE/SST (%)", ylabel="SSE/SST %", **common),
            (hv.Overlay(risk) * marker).opts(title=RISK_TITLES[self.state.risk], ylabel="share", **common),
            sizing_mode="stretch_width", css_classes=["micro-plots"],
        )

    def files(self) -> tuple[bytes, bytes]:
        """(CSV bytes, report JSON bytes) of one write of the current result, re-checked by the core.

        Rows are shuffled on every write and the report carries the CSV's checksum, so both
        downloads are served from the same write (kept until the result changes)."""
        result = self.state.result
        if self._cache is None or self._cache[0] is not result:
            s = microdata_sample(self.state.sample)
            with tempfile.TemporaryDirectory() as tmp:
                published = write_microaggregation(result, Path(tmp) / "microaggregated.csv",
                                                   identifiers=s.identifiers, source=s.file)
                self._cache = (result, published.target.files[0].read_bytes(), published.target.report.read_bytes())
        return self._cache[1], self._cache[2]

    def _csv(self):
        return io.BytesIO(self.files()[0])

    def _report(self):
        return io.BytesIO(self.files()[1])

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
