"""The Data tab: pick a sample or upload a CSV, give columns roles, load/build/download hierarchies,
see which values a hierarchy misses, then run (the state builds the profile off the page's thread;
this view shows its progress and can cancel it)."""

from __future__ import annotations

import io

import panel as pn
import param
from panel.io.state import set_curdoc

from microrelease.app.tabs.data.state import BUILDERS, ROLES, DataState
from microrelease.core import MicroreleaseError

BUILDER_HELP = {
    "intervals": "bucket widths, e.g. 5,10,20",
    "masking": "characters masked per level, e.g. 1,2",
    "dates": "date format, e.g. %Y-%m-%d",
    "taxonomy": "child>parent pairs, e.g. nurse>health,health>*",
}


def page_hand_back():
    """A function that runs another on this session's page (event loop, document lock, current
    document known to new components); None outside a served session."""
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return None

    def hand_back(fn) -> None:
        def locked() -> None:
            with set_curdoc(doc):
                fn()

        doc.add_next_tick_callback(locked)

    return hand_back


class DataView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=DataState)

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        s.hand_back = page_hand_back()
        self.sample = pn.widgets.Select.from_param(s.param.sample, css_classes=["sample-select"])
        self.load_sample = pn.widgets.Button(label="Load sample", color="primary", css_classes=["load-sample"])
        self.upload = pn.widgets.FileInput(accept=".csv,.txt,.tsv", label="Upload a CSV")
        self.roles = pn.Column(sizing_mode="stretch_width")
        self.qi = pn.widgets.Select(label="QI", options=[])
        self.kind = pn.widgets.Select(label="Build with", options=list(BUILDERS))
        self.options = pn.widgets.TextInput(label="Builder options", placeholder=BUILDER_HELP["intervals"])
        self.build = pn.widgets.Button(label="Build hierarchy")
        self.hier_upload = pn.widgets.FileInput(accept=".csv", label="or load an ARX hierarchy file")
        self.download = pn.widgets.FileDownload(callback=self._hierarchy_bytes, filename="hierarchy.csv",
                                                label="Download this hierarchy")
        self.preview = pn.widgets.Tabulator(disabled=True, height=220, show_index=False, sizing_mode="stretch_width")
        self.coverage = pn.pane.Markdown(css_classes=["coverage"], sizing_mode="stretch_width")
        self.run = pn.widgets.Button(label="Run: build the lattice profile", color="success", css_classes=["run"])
        self.cancel = pn.widgets.Button(label="Cancel", visible=False, css_classes=["cancel-run"])
        self.progress = pn.indicators.Progress(value=0, max=100, width=300, visible=False)
        self.status = pn.pane.Markdown(css_classes=["data-status"], sizing_mode="stretch_width")

        self.load_sample.on_click(self._load_sample)
        self.upload.param.watch(self._upload, "value")
        self.hier_upload.param.watch(self._hier_upload, "value")
        self.build.on_click(self._build)
        self.kind.param.watch(lambda e: setattr(self.options, "placeholder", BUILDER_HELP[e.new]), "value")
        self.qi.param.watch(self._show_hierarchy, "value")
        self.run.on_click(lambda _: self._guard(s.run))
        self.cancel.on_click(lambda _: s.cancel())
        s.param.watch(self._rebuild_roles, ["table"])
        s.param.watch(self._refresh_qis, ["roles", "hierarchies"])
        s.param.watch(self._show_run, ["run_state", "error"])
        # Panel forwards a change made on the worker thread to the page's event loop.
        s.param.watch(lambda ev: setattr(self.progress, "value", int(100 * ev.new)), ["progress"])

    # --- actions ---------------------------------------------------------------------------------
    def _guard(self, fn, *args) -> None:
        try:
            fn(*args)
        except MicroreleaseError as exc:
            self.status.object = f"⚠ {exc}"

    def _load_sample(self, _=None) -> None:
        self.status.object = ""
        self._guard(self.state.open_sample)

    def _upload(self, event) -> None:
        if event.new:
            self.status.object = ""
            self._guard(self.state.load_csv, event.new, self.upload.filename or "upload.csv")
            if not self.status.object:
                self.status.object = self.state.message

    def _hier_upload(self, event) -> None:
        if event.new and self.qi.value:
            self._guard(self.state.load_hierarchy, self.qi.value, event.new)

    def _build(self, _) -> None:
        if self.qi.value:
            self.status.object = ""
            self._guard(self.state.build, self.qi.value, self.kind.value, self.options.value)

    def _hierarchy_bytes(self):
        self.download.filename = f"{self.qi.value}.csv"
        return io.BytesIO(self.state.hierarchy_bytes(self.qi.value))

    # --- derived widgets -------------------------------------------------------------------------
    def _show_run(self, *_) -> None:
        s = self.state
        running = s.run_state == "running"
        self.progress.visible = self.cancel.visible = self.run.disabled = running
        if running:
            self.progress.value = 0
            self.status.object = f"Building the profile of {s.nodes} nodes…"
        elif s.run_state == "failed":
            self.status.object = f"⚠ {s.error}"
        elif s.run_state == "cancelled":
            self.status.object = "Cancelled: the lattice shown is the one loaded before."
        elif s.run_state == "loaded":
            d = s.explorer.dataset
            self.status.object = (f"<span id='data-status'>Loaded {d.n_rows} rows ({s.source}); "
                                  f"lattice of {d.lattice.size} nodes.</span>")

    def _rebuild_roles(self, *_) -> None:
        table = self.state.table
        if table is None:
            self.roles.objects = []
            return
        rows = []
        for column in table.columns:
            select = pn.widgets.Select(label=column, options=ROLES, value=self.state.roles.get(column, "insensitive"),
                                       width=200)
            select.param.watch(lambda e, c=column: self.state.set_role(c, e.new), "value")
            rows.append(select)
        self.roles.objects = [pn.pane.Markdown("**Column roles** (identifiers are never written out)"),
                              pn.FlexBox(*rows)]

    def _refresh_qis(self, *_) -> None:
        qis = self.state.quasi_identifiers
        self.qi.options = qis
        if qis and self.qi.value not in qis:
            self.qi.value = qis[0]
        self._show_hierarchy()

    def _show_hierarchy(self, *_) -> None:
        qi = self.qi.value
        h = self.state.hierarchies.get(qi) if qi else None
        self.preview.value = h.to_frame() if h is not None else None
        if not qi:
            self.coverage.object = "Mark columns as quasi-identifier to give them hierarchies."
        elif h is None:
            self.coverage.object = f"No hierarchy for **{qi}** yet: build one or load an ARX file."
        else:
            missing = self.state.missing(qi)
            self.coverage.object = (
                f"Hierarchy of **{qi}**: height {h.height}, {len(h.ground)} ground values. "
                + ("All data values are covered." if not missing else
                   f"<span id='missing'>⚠ {len(missing)} data value(s) missing: "
                   + ", ".join(f"{v!r} ({n} rows)" for v, n in list(missing.items())[:15]) + "</span>")
            )

    def __panel__(self):
        return pn.Column(
            "### Data", pn.Row(self.sample, self.load_sample), self.upload, self.status,
            self.roles,
            "### Hierarchies", pn.Row(self.qi, self.kind, self.options, self.build), self.hier_upload,
            self.coverage, self.preview, self.download,
            pn.Row(self.run, self.progress, self.cancel),
            sizing_mode="stretch_width",
        )
