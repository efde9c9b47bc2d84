"""Download the released CSV, its report and the report's page: the files ``microrelease release``
writes for the same decision, from one write."""

from __future__ import annotations

import io

import panel as pn
import param

from microrelease.app.tabs.export.export_state import FILE, REPORT, REPORT_HTML, ExportState
from microrelease.app.text import shown


class ExportView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=ExportState)

    def __init__(self, **params):
        super().__init__(**params)
        self.escape = pn.widgets.Checkbox.from_param(self.state.param.escape, css_classes=["escape-formulas"])
        self.publish_reference = pn.widgets.Checkbox.from_param(self.state.param.publish_reference,
                                                                css_classes=["publish-reference"])
        self.csv = pn.widgets.FileDownload(callback=self._csv, filename=FILE,
                                           label="Download released CSV", color="primary", css_classes=["download-csv"])
        self.report = pn.widgets.FileDownload(callback=self._report, filename=REPORT,
                                              label="Download release report (JSON)", css_classes=["download-report"])
        self.page = pn.widgets.FileDownload(callback=self._page, filename=REPORT_HTML,
                                            label="Download release report (HTML)", css_classes=["download-report-html"])
        self.note = pn.pane.Markdown(css_classes=["export-note"], sizing_mode="stretch_width")
        self.counts = pn.pane.Markdown(css_classes=["export-counts"], sizing_mode="stretch_width")
        self.refusal = pn.pane.Markdown(css_classes=["export-refusal"], sizing_mode="stretch_width")
        self.state.explorer.param.watch(self._describe, ["selected", "preferred", "answer", "profile", "dataset"])
        self._describe()

    def _csv(self):
        return io.BytesIO(self.state.files().data)

    def _report(self):
        return io.BytesIO(self.state.files().report)

    def _page(self):
        return io.BytesIO(self.state.files().html)

    def _describe(self, *_) -> None:
        s = self.state
        i = s.node()
        reason = s.refusal(i)
        self.csv.disabled = self.report.disabled = self.page.disabled = bool(reason)
        self.refusal.object = f"⚠ <span id='export-refusal'>{shown(reason)}</span>" if reason else ""
        self.refusal.visible = bool(reason)
        if i is None:
            self.note.object, self.counts.object = "Nothing to release.", ""
            return
        decision = s.decision()
        how = "selected node" if decision.chosen_by == "node" else f"preferred by {s.explorer.policy}"
        c = decision.criteria
        models = ", ".join(m.describe() for m in c.models)  # the models' own words, no data
        self.note.object = (
            f"Releases node <span id='export-node'>{list(decision.node)}</span> ({how}) for k = {c.k.k}, MaxSup = "
            f"{decision.max_sup} rows" + (f", {models} on {shown(c.sensitive.attribute)}" if models else "")
            + ". The file is read back and re-checked before it is offered; its report gives the same counts, and "
            "its page (HTML, printable) the decision, class sizes, risk and utility for a person to read.")
        c = s.counts()
        why = c["suppressed_by_reason"]
        by_model = "".join(f" ({m}: {n})" for m, n in why["by_model"].items())
        self.counts.object = (
            f"Writes <span id='export-released'>{c['released_rows']}</span> of {c['input_rows']} rows; "
            f"suppressed <span id='export-suppressed'>{c['suppressed_rows']}</span>: "
            f"{why['class_smaller_than_k']} in classes smaller than k, "
            f"{why['class_failing_a_privacy_model']} in larger classes failing a privacy model{by_model}.")

    def __panel__(self):
        return pn.Column("### Export", self.note, self.counts, self.refusal, self.escape, self.publish_reference,
                         pn.Row(self.csv, self.report, self.page), sizing_mode="stretch_width")
