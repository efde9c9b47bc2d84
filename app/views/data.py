"""The Data tab: pick a sample or upload a CSV, give columns roles, load/build/download hierarchies,
see which values a hierarchy misses, then run (profile built off the UI thread with a progress bar)."""

from __future__ import annotations

import io
import threading

import panel as pn
import param
from panel.io.state import set_curdoc

from microrelease.app.setup import BUILDERS, ROLES, DataSetup
from microrelease.app.state import Explorer
from microrelease.core import MicroreleaseError, build_profile, write_arx
from microrelease.core.data.samples import SAMPLES

BUILDER_HELP = {
    "intervals": "bucket widths, e.g. 5,10,20",
    "masking": "characters masked per level, e.g. 1,2",
    "dates": "date format, e.g. %Y-%m-%d",
    "taxonomy": "child>parent pairs, e.g. nurse>health,health>*",
}


class DataPanel(pn.viewable.Viewer):
    setup = param.ClassSelector(class_=DataSetup)
    explorer = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self.sample = pn.widgets.Select(label="Bundled sample", options=list(SAMPLES), value="adult",
                                        css_classes=["sample-select"])
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
        self.progress = pn.indicators.Progress(value=0, max=100, width=300, visible=False)
        self.status = pn.pane.Markdown(css_classes=["data-status"], sizing_mode="stretch_width")

        self.load_sample.on_click(self._load_sample)
        self.upload.param.watch(self._upload, "value")
        self.hier_upload.param.watch(self._hier_upload, "value")
        self.build.on_click(self._build)
        self.kind.param.watch(lambda e: setattr(self.options, "placeholder", BUILDER_HELP[e.new]), "value")
        self.qi.param.watch(self._show_hierarchy, "value")
        self.run.on_click(self._run)
        self.setup.param.watch(self._rebuild_roles, ["table"])
        self.setup.param.watch(self._refresh_qis, ["roles", "hierarchies"])

    # --- actions ---------------------------------------------------------------------------------
    def _guard(self, fn, *args) -> None:
        try:
            fn(*args)
        except (MicroreleaseError, ValueError) as exc:
            self.status.object = f"⚠ {exc}"

    def _load_sample(self, _=None) -> None:
        """Samples come with roles and hierarchies, so loading one also runs it."""
        self.status.object = ""
        self._guard(self.setup.load_sample, self.sample.value)
        if not self.status.object.startswith("⚠"):
            self._run(None)

    def _upload(self, event) -> None:
        if event.new:
            self._guard(self.setup.load_csv, event.new, self.upload.filename or "upload.csv")
            self.status.object = self.setup.message if not self.status.object.startswith("⚠") else self.status.object

    def _hier_upload(self, event) -> None:
        if event.new and self.qi.value:
            self._guard(self.setup.load_hierarchy, self.qi.value, event.new)

    def _build(self, _) -> None:
        if self.qi.value:
            self.status.object = ""
            self._guard(self.setup.build, self.qi.value, self.kind.value, self.options.value)

    def _hierarchy_bytes(self):
        h = self.setup.hierarchies.get(self.qi.value)
        buffer = io.StringIO()
        if h is not None:
            write_arx(h, buffer)
        self.download.filename = f"{self.qi.value}.csv"
        return io.BytesIO(buffer.getvalue().encode())

    def _run(self, _) -> None:
        """Build the profile off the UI thread (the page stays responsive), then show it."""
        try:
            dataset = self.setup.dataset()
        except MicroreleaseError as exc:
            self.status.object = f"⚠ {exc}"
            return
        self.progress.value, self.progress.visible, self.run.disabled = 0, True, True
        self.status.object = f"Building the profile of {dataset.lattice.size} nodes…"
        doc = pn.state.curdoc
        served = doc is not None and doc.session_context is not None

        def report(fraction: float) -> None:
            self.progress.value = int(100 * fraction)  # Panel forwards this to the page's event loop

        def finish(profile=None, error=None) -> None:
            self.progress.visible, self.run.disabled = False, False
            if error is not None:
                self.status.object = f"⚠ {error}"
                return
            self.explorer.load(dataset, profile)
            self.status.object = (f"<span id='data-status'>Loaded {dataset.n_rows} rows ({self.setup.source}); "
                                  f"lattice of {dataset.lattice.size} nodes.</span>")

        def work() -> None:
            try:
                result = {"profile": build_profile(dataset, progress=report if served else None)}
            except MicroreleaseError as exc:
                result = {"error": exc}
            if not served:
                finish(**result)
                return

            def locked() -> None:  # with the document lock, and the document known to new components
                with set_curdoc(doc):
                    finish(**result)

            doc.add_next_tick_callback(locked)

        if served:
            threading.Thread(target=work, name="microrelease-profile", daemon=True).start()
        else:
            work()

    # --- derived widgets -------------------------------------------------------------------------
    def _rebuild_roles(self, *_) -> None:
        table = self.setup.table
        if table is None:
            self.roles.objects = []
            return
        rows = []
        for column in table.columns:
            select = pn.widgets.Select(label=column, options=ROLES, value=self.setup.roles.get(column, "insensitive"),
                                       width=200)
            select.param.watch(lambda e, c=column: self.setup.set_role(c, e.new), "value")
            rows.append(select)
        self.roles.objects = [pn.pane.Markdown("**Column roles** (identifiers are never written out)"),
                              pn.FlexBox(*rows)]

    def _refresh_qis(self, *_) -> None:
        qis = self.setup.quasi_identifiers
        self.qi.options = qis
        if qis and self.qi.value not in qis:
            self.qi.value = qis[0]
        self._show_hierarchy()

    def _show_hierarchy(self, *_) -> None:
        qi = self.qi.value
        h = self.setup.hierarchies.get(qi) if qi else None
        self.preview.value = h.to_frame() if h is not None else None
        if not qi:
            self.coverage.object = "Mark columns as quasi-identifier to give them hierarchies."
        elif h is None:
            self.coverage.object = f"No hierarchy for **{qi}** yet: build one or load an ARX file."
        else:
            missing = self.setup.missing(qi)
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
            pn.Row(self.run, self.progress),
            sizing_mode="stretch_width",
        )
