"""Download the released CSV and its report: the same files the CLI ``release`` writes."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import panel as pn
import param

from microrelease.app.state import Explorer
from microrelease.core import write_release
from microrelease.core.release import report_path


class Export(pn.viewable.Viewer):
    explorer = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self.csv = pn.widgets.FileDownload(callback=self._csv, filename="release.csv", label="Download released CSV",
                                           color="primary", css_classes=["download-csv"])
        self.report = pn.widgets.FileDownload(callback=self._report, filename="release.report.json",
                                              label="Download release report", css_classes=["download-report"])
        self.note = pn.pane.Markdown()
        self.explorer.param.watch(self._describe, ["selected", "preferred", "answer"])
        self._describe()

    def node(self) -> int | None:
        e = self.explorer
        return e.selected if e.selected is not None else e.preferred

    def _describe(self, *_) -> None:
        i = self.node()
        self.note.object = ("Nothing to release: no node satisfies the question." if i is None else
                            f"Releases node {list(self.explorer.lattice.node(i))} "
                            f"({'selected' if self.explorer.selected is not None else 'preferred'}) for k = {self.explorer.k}; "
                            "the file is read back and re-checked before it is offered.")

    def files(self) -> tuple[bytes, bytes]:
        """(CSV bytes, report JSON bytes) written and re-checked by the core."""
        e = self.explorer
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "release.csv"
            write_release(e.dataset, e.lattice.node(self.node()), e.k, out,
                          parameters={"chosen_by": "dashboard", "policy": e.policy})
            return out.read_bytes(), report_path(out).read_bytes()

    def _csv(self):
        return io.BytesIO(self.files()[0])

    def _report(self):
        return io.BytesIO(self.files()[1])

    def __panel__(self):
        return pn.Column("### Export", self.note, pn.Row(self.csv, self.report))
