"""File uploads that neither close the session nor fill the server's memory.

Panel's FileInput sends a file as one websocket message, so a file over the server's message limit
closes the connection (1009 "message too big") and kills the session; it has no size limit of its
own. The FileDropper sends files in chunks and refuses a file over ``max_file_size`` in the browser,
where the user sees it ("File is too large", the file's size, "Maximum file size is 50 MB").
``CappedFileDropper`` also stops buffering on the server past the cap, for a client that does
not check.
"""

from __future__ import annotations

import panel as pn
import panel.models.file_dropper  # noqa: F401 - registers FilePond's scripts before the page renders (this tab is built later)
import param

CHUNK_BYTES = 4_000_000  # well under the server's websocket message limit


class CappedFileDropper(pn.widgets.FileDropper):
    """A one-file FileDropper that keeps at most ``cap`` bytes: the browser refuses a larger file, and
    the server drops one that passes ``cap`` anyway and names it in ``refused``."""

    cap = param.Integer(default=50_000_000, bounds=(1_000_000, None),
                        doc="bytes: a whole number of MB (10⁶ bytes, as the browser counts them)")
    refused = param.Parameter(default=None, doc="(file name, bytes received) of the last file dropped at the cap")

    _rename = {**pn.widgets.FileDropper._rename, "cap": None, "refused": None}  # server-side only

    def __init__(self, **params):
        params.setdefault("chunk_size", CHUNK_BYTES)
        params.setdefault("multiple", False)
        # FilePond's PDF preview throws on the items of a FilePond removed with its tab (a console error).
        # Not []: Bokeh leaves out a value equal to its Python default, and the browser's default has PDF.
        params.setdefault("previews", ["image"])
        super().__init__(**params)
        self.max_file_size = f"{self.cap // 1_000_000}MB"
        self.param.watch(lambda e: setattr(self, "max_file_size", f"{e.new // 1_000_000}MB"), "cap")

    def _process_event(self, event) -> None:
        data = event.data
        if event.event_name == "upload_event":
            name = data["name"]
            if data["chunk"] > 1 and name not in self._file_buffer:
                return  # the rest of a file already dropped
            held = sum(len(b) for n, chunks in self._file_buffer.items() if n != name or data["chunk"] > 1
                       for b in chunks)
            if held + len(data["data"]) > self.cap:
                self._file_buffer.pop(name, None)
                self.refused = (name, held + len(data["data"]))
                return
        super()._process_event(event)

    def take(self) -> list[tuple[str, bytes | str]]:
        """The files uploaded since the last call, let go of here (the caller keeps what it needs).

        Removing a file in the widget also changes ``value``: then there is nothing to take."""
        files = list(self.value.items())
        self.value.clear()
        return files
