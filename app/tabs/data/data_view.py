"""The Data tab: the current data (whatever the other tabs explore), then its four steps: pick a sample
or upload a CSV, give columns roles, give each QI a hierarchy (load, build, download; the values it
misses listed before anything runs), then run (the state builds the profile off the page's thread;
this view shows its progress and can cancel it). Every step says what it needs and what it produced.

Every text quoting the data (file names, column names, values, level names) is escaped with
``shown_html`` into HTML panes (they render raw HTML, like Markdown panes).
"""

from __future__ import annotations

import contextlib
import io

import panel as pn
import param
from panel.io.state import set_curdoc

from microrelease.app.tabs.data import steps
from microrelease.app.tabs.data.data_state import BUILDERS, MAX_UPLOAD_BYTES, ROLES, DataState, too_big
from microrelease.app.tabs.data.upload import CappedFileDropper
from microrelease.app.text import shown_html, tabulator_titles
from microrelease.core import DataError, MicroreleaseError

BUILDER_HELP = {
    "intervals": "bucket widths, e.g. 5,10,20",
    "masking": "characters masked per level, e.g. 1,2",
    "dates": "date format, e.g. %Y-%m-%d",
    "taxonomy": "child>parent pairs, e.g. nurse>health,health>*",
}
HIERARCHY_CAP = 10_000_000
HIERARCHY_COLUMNS = ("QI", "height", "levels", "e.g.", "ground values", "data values missing")
TABLE_CSS = "table {border-collapse: collapse} th, td {padding: 2px 10px; text-align: left; border-bottom: 1px solid lightgray}"


def page_hand_back():
    """A function that runs another on this session's page (event loop, document lock, current
    document known to new components); None outside a served session. What ``fn`` changes reaches the
    browser as one message: sent change by change, a new answer's dozens of changes (sources, ranges,
    texts) were each applied and laid out on their own, most of a 12-QI k change's wall time."""
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return None

    def hand_back(fn) -> None:
        def locked() -> None:
            with set_curdoc(doc), pn.io.hold(doc):
                fn()

        doc.add_next_tick_callback(locked)

    return hand_back


def page_hold():
    """A context manager factory that sends what is changed under it to this session's page as one
    message (a question answered in the widget's own callback: a kept answer, a policy among the
    k-minimal nodes, any question the profile answers); a no-op outside a served session."""
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return contextlib.nullcontext
    return lambda: pn.io.hold(doc)


def text_pane(css: str, **params) -> pn.pane.HTML:
    return pn.pane.HTML(css_classes=[css], sizing_mode="stretch_width", **params)


def hierarchy_table(rows: list[steps.HierarchyRow]) -> str:
    """Each QI's hierarchy in one row (escaped HTML)."""
    def cells(r: steps.HierarchyRow) -> tuple:
        if r.height is None:
            return r.qi, "none yet", "", "", "", ""
        return r.qi, r.height, r.levels, r.example, r.ground, f"⚠ {r.missing}" if r.missing else 0

    if not rows:
        return ""
    head = "".join(f"<th>{c}</th>" for c in HIERARCHY_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{shown_html(c)}</td>" for c in cells(r)) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def show_frame(table: pn.widgets.Tabulator, frame) -> None:
    """Show ``frame`` with its column names as text: Tabulator renders a column title as HTML."""
    table.param.update(value=frame, titles=tabulator_titles(frame))


class DataView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=DataState)

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        s.hand_back = page_hand_back()
        self.sample = pn.widgets.Select.from_param(s.param.sample, css_classes=["sample-select"])
        self.load_sample = pn.widgets.Button(label="Load sample", color="primary", css_classes=["load-sample"])
        # No accepted types: the browser's type of a CSV varies (text/csv, application/vnd.ms-excel, none) and
        # the upload widget refuses every other one; the reader says plainly what is not a CSV.
        self.upload = CappedFileDropper(cap=MAX_UPLOAD_BYTES, layout="compact", css_classes=["csv-upload"], width=420)
        self.status = text_pane("data-status")
        self.next_step = text_pane("data-next")
        self.steps = {name: text_pane(f"{name}-step", margin=(0, 10)) for name in ("data", "roles", "hierarchies", "run")}
        self.table = pn.widgets.Tabulator(disabled=True, show_index=False, sizing_mode="stretch_width",
                                          css_classes=["data-preview"])
        self.roles = pn.FlexBox(sizing_mode="stretch_width")
        self.role_lists: dict[str, pn.widgets.MultiChoice] = {}
        self.overview = text_pane("hierarchy-overview", stylesheets=[TABLE_CSS])
        self.qi = pn.widgets.Select(label="QI", options=[])
        self.kind = pn.widgets.Select(label="Build with", options=list(BUILDERS))
        self.options = pn.widgets.TextInput(label="Builder options", placeholder=BUILDER_HELP["intervals"],
                                            css_classes=["builder-options"])
        self.build = pn.widgets.Button(label="Build hierarchy", css_classes=["build-hierarchy"])
        self.hier_upload = CappedFileDropper(cap=HIERARCHY_CAP, layout="compact", css_classes=["hierarchy-upload"],
                                             width=420)
        self.download = pn.widgets.FileDownload(callback=self._hierarchy_bytes, filename="hierarchy.csv",
                                                label="Download this hierarchy")
        self.preview = pn.widgets.Tabulator(disabled=True, show_index=False, sizing_mode="stretch_width",
                                            pagination="local", page_size=8, css_classes=["hierarchy-preview"])
        self.coverage = text_pane("coverage")
        self.run = pn.widgets.Button(label="Run: build the lattice profile", color="success", css_classes=["run"])
        self.cancel = pn.widgets.Button(label="Cancel", visible=False, css_classes=["cancel-run"])
        self.progress = pn.indicators.Progress(value=0, max=100, width=300, visible=False)

        self.load_sample.on_click(self._load_sample)
        self.upload.param.watch(self._upload, "value")
        self.upload.param.watch(self._dropped, "refused")
        self.hier_upload.param.watch(self._hier_upload, "value")
        self.hier_upload.param.watch(self._dropped, "refused")
        self.build.on_click(self._build)
        self.kind.param.watch(lambda e: setattr(self.options, "placeholder", BUILDER_HELP[e.new]), "value")
        self.qi.param.watch(self._show_hierarchy, "value")
        self.run.on_click(lambda _: self._guard(s.run))
        self.cancel.on_click(lambda _: s.cancel())
        s.param.watch(self._show_table, ["table"])
        s.param.watch(self._refresh_qis, ["roles", "hierarchies"])
        s.param.watch(self._sync_role_lists, ["roles"])
        s.param.watch(self._show_run, ["run_state"])
        s.param.watch(self._show_text, ["message", "refused", "run_state", "error", "in_explorer", "source",
                                        "table", "roles", "hierarchies"])
        # Panel forwards a change made on the worker thread to the page's event loop.
        s.param.watch(lambda ev: setattr(self.progress, "value", int(100 * ev.new)), ["progress"])
        self._show_table()
        self._refresh_qis()
        self._show_run()
        self._show_text()

    # --- actions ---------------------------------------------------------------------------------
    def _guard(self, fn, *args) -> None:
        """Run an action; an input error is shown as the state's refusal, a bug is raised."""
        try:
            fn(*args)
        except MicroreleaseError as exc:
            self.state.refuse(exc)

    def _load_sample(self, _=None) -> None:
        self._guard(self.state.open_sample)

    def _upload(self, _=None) -> None:
        for name, content in self.upload.take():
            self._guard(self.state.load_csv, content, name)

    def _hier_upload(self, _=None) -> None:
        for _name, content in self.hier_upload.take():
            if self.qi.value:
                data = content.encode() if isinstance(content, str) else content
                self._guard(self.state.load_hierarchy, self.qi.value, data)
            else:
                self.state.refuse("mark a column as quasi-identifier first: a hierarchy belongs to a QI")

    def _dropped(self, event) -> None:
        if event.new is not None:
            self.state.refuse(DataError(too_big(*event.new, cap=event.obj.cap, at_least=True)))

    def _build(self, _) -> None:
        if self.qi.value:
            self._guard(self.state.build, self.qi.value, self.kind.value, self.options.value)

    def _hierarchy_bytes(self):
        self.download.filename = f"{self.qi.value}.csv"
        return io.BytesIO(self.state.hierarchy_bytes(self.qi.value))

    # --- derived widgets -------------------------------------------------------------------------
    def _show_text(self, *_) -> None:
        s = self.state
        self.status.object = f"<span id='data-status'>{shown_html(steps.status_line(s))}</span>"
        self.next_step.object = f"<b id='data-next'>{shown_html(steps.next_step(s))}</b>"
        for name, text in (("data", steps.data_step(s)), ("roles", steps.roles_step(s)),
                           ("hierarchies", steps.hierarchies_step(s)), ("run", steps.run_step(s))):
            self.steps[name].object = f"<i>{shown_html(text)}</i>"
        self.overview.object = hierarchy_table(steps.hierarchy_rows(s))

    def _show_run(self, *_) -> None:
        running = self.state.run_state == "running"
        self.progress.visible = self.cancel.visible = self.run.disabled = running
        if running:
            self.progress.value = 0

    def _show_table(self, *_) -> None:
        table = self.state.table
        show_frame(self.table, None if table is None else table.iloc[:steps.PREVIEW_ROWS, :steps.PREVIEW_COLUMNS])
        self.table.visible = table is not None
        columns = [] if table is None else list(table.columns)
        if len(columns) <= steps.ROLE_MENUS:
            self.role_lists = {}
            self.roles.objects = [self._role_menu(c) for c in columns]
            return
        # One searchable list per role: thousands of menus froze the page (issue 26: 5,000 columns)
        self.role_lists = {r: self._role_list(r, columns) for r in ROLES if r != "insensitive"}
        note = pn.pane.HTML(f"<i>{len(columns):,} columns: type a column's name in a role's list to give it "
                            "that role; every column in no list is insensitive.</i>", css_classes=["role-lists-note"],
                            sizing_mode="stretch_width")
        self.roles.objects = [note, *self.role_lists.values()]

    def _role_menu(self, column: str) -> pn.widgets.Select:
        select = pn.widgets.Select(label=column, options=ROLES, value=self.state.roles.get(column, "insensitive"),
                                   width=200, css_classes=["role-select"])
        select.param.watch(lambda e: self._guard(self.state.set_role, column, e.new), "value")
        return select

    def _role_list(self, role: str, columns: list[str]) -> pn.widgets.MultiChoice:
        chosen = [c for c in columns if self.state.roles.get(c) == role]
        # Bokeh's MultiChoice writes an option's label as HTML (Choices.js with allowHTML): a column name is
        # data, so the label is its escaped text and the value the name itself
        box = pn.widgets.MultiChoice(label=f"{role} columns", options={shown_html(c): c for c in columns}, value=chosen,
                                     search_option_limit=25,
                                     option_limit=None, placeholder="type a column name", width=420,
                                     css_classes=["role-list", f"role-list-{role}"])
        box.param.watch(lambda e: self._guard(self.state.set_roles, role, list(e.new)), "value")
        return box

    def _sync_role_lists(self, *_) -> None:
        """A column given a role in one list leaves the list of its former role."""
        for role, box in self.role_lists.items():
            chosen = [c for c, r in self.state.roles.items() if r == role]
            if box.value != chosen:
                box.value = chosen

    def _refresh_qis(self, *_) -> None:
        qis = self.state.quasi_identifiers
        self.qi.options = qis
        if qis and self.qi.value not in qis:
            self.qi.value = qis[0]
        self._show_hierarchy()

    def _show_hierarchy(self, *_) -> None:
        qi = self.qi.value
        h = self.state.hierarchies.get(qi) if qi else None
        show_frame(self.preview, h.to_frame() if h is not None else None)
        self.preview.visible = self.download.visible = h is not None
        if not qi:
            self.coverage.object = "Mark columns as quasi-identifier to give them hierarchies."
        elif h is None:
            self.coverage.object = f"No hierarchy for <b>{shown_html(qi)}</b> yet: build one or load an ARX file."
        else:
            missing = self.state.missing(qi)
            listed = ", ".join(f"{shown_html(repr(v))} ({n} rows)" for v, n in list(missing.items())[:15])
            self.coverage.object = (
                f"Hierarchy of <b>{shown_html(qi)}</b> (below): height {h.height}, {len(h.ground)} ground values. "
                + ("All data values are covered." if not missing else
                   f"<span id='missing'>⚠ {len(missing)} data value(s) missing: {listed}</span>")
            )

    def __panel__(self):
        s = self.steps
        upload_help = (f"CSV, TSV or TXT up to {MAX_UPLOAD_BYTES / 1e6:.0f} MB, separator detected "
                       "(a larger file is refused here: use the command line).")
        return pn.Column(
            "### Data", self.status, self.next_step,
            "#### 1. The table", s["data"], pn.Row(self.sample, self.load_sample),
            pn.Row(self.upload, pn.pane.Markdown(upload_help, width=360)), self.table,
            "#### 2. Column roles", s["roles"], self.roles,
            "#### 3. Hierarchies", s["hierarchies"], self.overview,
            pn.Row(self.qi, self.kind, self.options, self.build),
            pn.Row(self.hier_upload, pn.pane.Markdown("or load the QI's hierarchy from an ARX file", width=360)),
            self.coverage, self.preview, self.download,
            "#### 4. Run", s["run"], pn.Row(self.run, self.progress, self.cancel),
            sizing_mode="stretch_width",
        )
