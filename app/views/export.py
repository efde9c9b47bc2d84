"""Download the released CSV and its report: the files ``microrelease release`` writes for the same decision.

The decision is the state's :meth:`~microrelease.app.state.Explorer.release_spec` (node, k, MaxSup,
sensitive attribute, privacy models, how the node was chosen); this view only writes it. Rows are
shuffled on every write, so the CSV and the report (which carries the CSV's checksum) must come from
one write: both downloads are served from the bytes of the last write for the current decision.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import panel as pn
import param

from microrelease.app.state import Explorer
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.release import NodeRelease

FILE = "release.csv"


def decision_key(spec: NodeRelease, escape: bool) -> tuple:
    """What makes two writes the same release (the table and the sensitive frequency by identity)."""
    return (id(spec.data), tuple(spec.node), spec.k, spec.max_sup, id(spec.sensitive),
            tuple(m.describe() for m in spec.models), spec.chosen_by, spec.policy,
            tuple(sorted((spec.weights or {}).items())), bool(escape))


class Export(pn.viewable.Viewer):
    explorer = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        # (key, spec, csv bytes, report bytes) of the last write; the spec is held so that the ids
        # in the key cannot be reused by other objects while the entry lives
        self._cache: tuple | None = None
        self.escape = pn.widgets.Checkbox(label="Escape spreadsheet formulas", value=False,
                                          css_classes=["escape-formulas"])
        self.csv = pn.widgets.FileDownload(callback=self._csv, filename=FILE, label="Download released CSV",
                                           color="primary", css_classes=["download-csv"])
        self.report = pn.widgets.FileDownload(callback=self._report, filename="release.report.json",
                                              label="Download release report", css_classes=["download-report"])
        self.note = pn.pane.Markdown(css_classes=["export-note"], sizing_mode="stretch_width")
        self.counts = pn.pane.Markdown(css_classes=["export-counts"], sizing_mode="stretch_width")
        self.refusal = pn.pane.Markdown(css_classes=["export-refusal"], sizing_mode="stretch_width")
        self.explorer.param.watch(self._describe, ["selected", "preferred", "answer", "profile", "dataset"])
        self._describe()

    def spec(self) -> NodeRelease:
        return self.explorer.release_spec()

    def _describe(self, *_) -> None:
        e = self.explorer
        i = e.export_node()
        reason = e.export_refusal(i)
        self.csv.disabled = self.report.disabled = bool(reason)
        self.refusal.object = f"⚠ <span id='export-refusal'>{reason}</span>" if reason else ""
        self.refusal.visible = bool(reason)
        if i is None:
            self.note.object, self.counts.object = "Nothing to release.", ""
            return
        spec = self.spec()
        how = "selected node" if spec.chosen_by == "node" else f"preferred by {e.policy}"
        models = ", ".join(m.describe() for m in spec.models)
        self.note.object = (
            f"Releases node <span id='export-node'>{list(spec.node)}</span> ({how}) for k = {spec.k}, MaxSup = "
            f"{spec.max_sup} rows" + (f", {models} on {spec.sensitive.attribute}" if models else "")
            + ". The file is read back and re-checked before it is offered; its report gives the same counts.")
        c = spec.suppression().counts(e.dataset.n_rows)
        why = c["suppressed_by_reason"]
        by_model = "".join(f" ({m}: {n})" for m, n in why["by_model"].items())
        self.counts.object = (
            f"Writes <span id='export-released'>{c['released_rows']}</span> of {c['input_rows']} rows; "
            f"suppressed <span id='export-suppressed'>{c['suppressed_rows']}</span>: "
            f"{why['class_smaller_than_k']} in classes smaller than k, "
            f"{why['class_failing_a_privacy_model']} in classes failing a privacy model{by_model}.")

    def files(self) -> tuple[bytes, bytes]:
        """(CSV bytes, report JSON bytes) of one write of the current decision, re-checked by the core.

        Raises InvalidParameterError when the node cannot be exported (see ``export_refusal``)."""
        e = self.explorer
        reason = e.export_refusal(e.export_node())
        if reason:
            raise InvalidParameterError(reason)
        spec = self.spec()
        key = decision_key(spec, self.escape.value)
        if self._cache is None or self._cache[0] != key:
            with tempfile.TemporaryDirectory() as tmp:
                published = spec.write(Path(tmp) / FILE, escape=self.escape.value)
                self._cache = (key, spec, published.target.files[0].read_bytes(),
                               published.target.report.read_bytes())
        return self._cache[2], self._cache[3]

    def _csv(self):
        return io.BytesIO(self.files()[0])

    def _report(self):
        return io.BytesIO(self.files()[1])

    def __panel__(self):
        return pn.Column("### Export", self.note, self.counts, self.refusal, self.escape,
                         pn.Row(self.csv, self.report), sizing_mode="stretch_width")
