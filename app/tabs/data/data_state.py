"""State of the Data tab (param only): the table, column roles and one hierarchy per QI, then the run.

It starts from the dataset the Explorer holds, and follows it: what the other tabs explore is what
this tab shows. Everything a user picks is checked here with the core's own validators, so the page
can show which data values a hierarchy misses before anything runs. Messages are plain text (the
view escapes them: they quote file names, column names and data values). ``DataState.run``
builds the profile of the prepared dataset and loads it into the shared Explorer: in a served
session on a worker thread, with progress and cancel, handing the result back through the session's
``hand_back`` (the view gives one that runs a function on the page's event loop, under the document
lock).
"""

from __future__ import annotations

import io
import logging
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import param

from microrelease.app.explorer.explorer import Explorer
from microrelease.app.explorer.large import large_lattice
from microrelease.app.text import plural
from microrelease.core import Dataset, Hierarchy, build_profile, dates, intervals, masking, read_arx, taxonomy
from microrelease.core.data.reading import LONGEST_SAMPLE, detect_separator, read_table, separator_sample
from microrelease.core.data.roles import AttributeRole, Schema
from microrelease.core.data.samples import SAMPLES, sample
from microrelease.core.exceptions import Cancelled, DataError, HierarchyError, MicroreleaseError
from microrelease.core.lattice.hierarchies import MISSING, find_hierarchy_file, write_arx

# In decimal megabytes, as the browser's upload widget counts them: its refusal and ours name the same cap.
MAX_UPLOAD_BYTES = 50_000_000
ROLES = [r.value for r in AttributeRole]
BUILDERS = ("intervals", "masking", "dates", "taxonomy")
RUN_STATES = ("idle", "running", "loaded", "failed", "cancelled")
log = logging.getLogger(__name__)


class DataState(param.Parameterized):
    """A table with roles and hierarchies being prepared; ``dataset`` makes the core Dataset and
    ``run`` loads it into the Explorer."""

    explorer = param.ClassSelector(class_=Explorer)
    sample = param.Selector(default="adult", objects=list(SAMPLES), label="Bundled sample")
    source = param.String(default="")
    table = param.DataFrame(default=None, allow_None=True)
    roles = param.Dict(default={})
    hierarchies = param.Dict(default={})
    message = param.String(default="", doc="what the last action did, or why it was refused (plain text)")
    refused = param.Boolean(default=False, doc="the message says why an action was refused")
    in_explorer = param.Boolean(default=False, doc="the table, roles and hierarchies are those the Explorer holds")
    run_state = param.Selector(default="idle", objects=list(RUN_STATES), doc="the last run's state")
    progress = param.Number(default=0.0, bounds=(0, 1), doc="fraction of the running profile done")
    nodes = param.Integer(default=0, doc="lattice size of the dataset being run")
    error = param.String(default="", doc="why the last run failed")

    def __init__(self, **params):
        super().__init__(**params)
        # Runs ``fn`` where the page may be changed; None: here and now (no served page: tests, notebooks).
        self.hand_back: Callable[[Callable[[], None]], None] | None = None
        self._stop = threading.Event()
        self._ran: Dataset | None = None  # the dataset the last run handed to the Explorer
        self._missing: dict[str, dict[str, int]] = {}  # missing() by QI, for the data as it stands
        self._edited = False  # the data changed while a run was building its profile
        if self.explorer is not None:
            self.explorer.param.watch(lambda event: self.adopt(event.new), "dataset")
            self.adopt(self.explorer.dataset)

    # --- what is shown ---------------------------------------------------------------------------
    def adopt(self, dataset: Dataset | None) -> None:
        """Show ``dataset`` (the Explorer's) as the current data, unless this state made it."""
        if dataset is None or dataset is self._ran:
            return
        with param.parameterized.batch_call_watchers(self):
            self.source = source_name(dataset)
            self.table = dataset.table
            self.roles = {c: dataset.schema.role(c).value for c in dataset.table.columns}
            self.hierarchies = dict(zip(dataset.quasi_identifiers, dataset.hierarchies, strict=True))
            self.message, self.refused = "", False
        # after the batch: the watcher of the table above marks the data as changed
        self.param.update(run_state="loaded", error="", in_explorer=True)
        self._missing = {q: {} for q in dataset.quasi_identifiers}  # a Dataset covers its values (checked)

    def refuse(self, reason: Exception | str) -> None:
        """Show why an action was refused (until the next action)."""
        self.param.update(message=str(reason), refused=True)

    def _say(self, text: str) -> None:
        self.param.update(message=text, refused=False)

    @param.depends("table", "roles", "hierarchies", watch=True)
    def _changed(self) -> None:
        # What was run, refused or cancelled is about the data as it was: that no longer shows.
        self.in_explorer = False
        self._missing = {}
        if self.run_state == "running":
            self._edited = True  # what the run loads is no longer what this tab shows
        else:
            self.param.update(run_state="idle", error="")

    def load_sample(self, name: str | None = None) -> None:
        name = self.sample if name is None else name
        s = sample(name)
        table = read_table(s.path)
        roles = {c: ("quasi-identifier" if c in s.qi else "sensitive" if c in s.sensitive else "insensitive")
                 for c in table.columns}
        found = {q: read_arx(f, q) for q in s.qi if (f := find_hierarchy_file(s.folder, q)) is not None}
        with param.parameterized.batch_call_watchers(self):
            self.source, self.table, self.roles, self.hierarchies = f"sample: {name}", table, roles, found
        self._say(f"Loaded the {SAMPLES[name].description} with its roles and hierarchies.")

    def load_csv(self, content: bytes | str, filename: str) -> None:
        """An uploaded CSV (bytes, or text the browser already decoded): size-capped, separator
        detected, every cell kept as text."""
        size = len(content.encode()) if isinstance(content, str) else len(content)
        if size > MAX_UPLOAD_BYTES:
            raise DataError(too_big(filename, size))
        data = content.encode() if isinstance(content, str) else content
        sep = detect_separator(separator_sample(data[:LONGEST_SAMPLE].decode("utf-8-sig", errors="replace")))
        # the core's reader and its reading rule, as for the command line: a ragged row, a NUL byte or
        # bytes that are not UTF-8 are refused naming the line (pandas alone would read them with blanks)
        with tempfile.TemporaryDirectory(prefix="microrelease-upload-") as folder:
            path = Path(folder) / "upload.csv"
            path.write_bytes(data)
            try:
                table = read_table(path, sep=sep)
            except DataError as exc:
                raise DataError(str(exc).replace(str(path), filename)) from None
        if len(table) == 0:
            raise DataError(f"{filename} has no rows")
        with param.parameterized.batch_call_watchers(self):
            self.source, self.table, self.hierarchies = filename, table, {}
            self.roles = {c: "insensitive" for c in table.columns}
        blank = table.attrs.get("blank_lines_skipped", 0)
        skipped = f"; {blank:,} blank line(s) skipped" if blank else ""
        rows, columns = len(table), len(table.columns)
        self._say(f"Read {plural(rows, 'row', spec=',')} × {plural(columns, 'column', spec=',')} from {filename} "
                  f"(separator {sep!r}{skipped}).")

    @property
    def quasi_identifiers(self) -> list[str]:
        return [c for c, r in self.roles.items() if r == "quasi-identifier"]

    def set_role(self, column: str, role: str) -> None:
        if role not in ROLES:
            raise DataError(f"unknown role {role!r} for column {column!r}; choose one of {ROLES}")
        self._set_role_map({**self.roles, column: role})

    def set_roles(self, role: str, columns: list[str]) -> None:
        """Give ``role`` to exactly ``columns``: listed columns take it, the others that had it become
        insensitive (a wide table's roles are chosen as one list per role)."""
        if role not in ROLES:
            raise DataError(f"unknown role {role!r}; choose one of {ROLES}")
        unknown = [c for c in columns if c not in self.roles]
        if unknown:
            raise DataError(f"no column {unknown[0]!r} in the table")
        listed = set(columns)
        roles = {c: role if c in listed else ("insensitive" if r == role else r) for c, r in self.roles.items()}
        if roles != self.roles:
            self._set_role_map(roles)

    def _set_role_map(self, roles: dict[str, str]) -> None:
        self.roles = roles
        if self.refused:  # the refusal was about the roles as they were
            self._say("")

    def values(self, column: str) -> pd.Series:
        return self.table[column]

    def build(self, qi: str, kind: str, options: str = "") -> Hierarchy:
        """Build a hierarchy for ``qi`` with a core builder; ``options`` as typed in the form."""
        values = [v for v in pd.unique(self.values(qi)) if v != MISSING]
        opts = [o.strip() for o in options.split(",") if o.strip()]
        try:
            if kind == "intervals":
                h = intervals(qi, values, [float(o) if "." in o else int(o) for o in opts] or [5, 10, 20])
            elif kind == "masking":
                h = masking(qi, values, [int(o) for o in opts] or None)
            elif kind == "dates":
                h = dates(qi, values, format=options.strip() or "%Y-%m-%d")
            elif kind == "taxonomy":
                pairs = [p.split(">") for p in opts]
                h = taxonomy(qi, {c.strip(): p.strip() for c, p in pairs})
            else:
                raise HierarchyError(qi, f"unknown builder {kind!r}; choose one of {BUILDERS}")
        except ValueError as exc:
            if isinstance(exc, HierarchyError):
                raise
            raise HierarchyError(qi, f"cannot read the builder options {options!r}: {exc}") from None
        self.hierarchies = {**self.hierarchies, qi: h}
        self._say(f"Built the hierarchy of {qi} with {kind}: height {h.height}.")
        return h

    def hierarchy_bytes(self, qi: str) -> bytes:
        """The ARX file of ``qi``'s hierarchy (empty without one)."""
        h = self.hierarchies.get(qi)
        buffer = io.StringIO()
        if h is not None:
            write_arx(h, buffer)
        return buffer.getvalue().encode()

    def load_hierarchy(self, qi: str, content: bytes) -> Hierarchy:
        try:
            text = content.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise HierarchyError(qi, f"the hierarchy file is not UTF-8 text ({exc.reason})") from None
        h = read_arx(io.StringIO(text), qi)
        self.hierarchies = {**self.hierarchies, qi: h}
        self._say(f"Loaded the hierarchy of {qi} from its ARX file: height {h.height}.")
        return h

    def missing(self, qi: str) -> dict[str, int]:
        """Data values of ``qi`` that its hierarchy lacks (with row counts), before anything runs."""
        h = self.hierarchies.get(qi)
        if h is None:
            return {}
        if qi not in self._missing:  # the page asks for each QI several times per change
            column = self.values(qi)
            self._missing[qi] = (h.with_missing() if (column == MISSING).any() else h).missing_values(column)
        return self._missing[qi]

    def dataset(self) -> Dataset:
        qi = self.quasi_identifiers
        if not qi:
            raise DataError("mark at least one column as quasi-identifier")
        absent = [q for q in qi if q not in self.hierarchies]
        if absent:
            raise DataError(f"no hierarchy yet for QI(s) {absent}: load or build one")
        schema = Schema(tuple(qi), tuple(c for c, r in self.roles.items() if r == "identifier"),
                        tuple(c for c, r in self.roles.items() if r == "sensitive"))
        return Dataset(self.table, schema, tuple(self.hierarchies[q] for q in qi), source=self.source)

    # --- the run ---------------------------------------------------------------------------------
    def open_sample(self) -> None:
        """Samples come with roles and hierarchies, so opening one also runs it."""
        self.load_sample()
        self.run()

    def run(self) -> None:
        """Build the profile of ``dataset`` and load both into the Explorer.

        With ``hand_back`` (a served page) the profile is built on a worker thread, so the page
        stays responsive, reporting ``progress`` and stopping on ``cancel``; the Explorer is
        then loaded through ``hand_back``. Without it, all runs here and now.
        """
        self.param.update(run_state="idle", message="", refused=False)  # the last outcome no longer shows
        try:
            dataset = self.dataset()
        except MicroreleaseError as exc:
            self.param.update(run_state="failed", error=str(exc))
            return
        self._stop = stop = threading.Event()
        self._ran, self._edited = dataset, False
        self.param.update(nodes=dataset.lattice.size, progress=0.0, error="")
        self.run_state = "running"
        hand_back = self.hand_back

        def report(fraction: float) -> None:
            self.progress = fraction

        def work() -> None:
            try:
                # a lattice too large for the profile: the Explorer answers it by the pruned search instead
                profile = None if large_lattice(dataset) else build_profile(
                    dataset, progress=report if hand_back else None, should_stop=stop.is_set)
                outcome = {"dataset": dataset, "profile": profile}
            except Cancelled:
                outcome = {"cancelled": True}
            except MicroreleaseError as exc:
                outcome = {"error": exc}
            except Exception as exc:  # a bug: the page must show a failure, not keep "running" forever
                log.exception("building the lattice profile of %s failed", dataset.source)
                outcome = {"error": f"an internal error stopped the run ({type(exc).__name__}); "
                                    "the server log has the details"}
            if hand_back is None:
                self._finish(**outcome)
            else:
                hand_back(lambda: self._finish(**outcome))

        if hand_back is None:
            work()
        else:
            threading.Thread(target=work, name="microrelease-profile", daemon=True).start()

    def cancel(self) -> None:
        """Stop the running profile (the Explorer keeps what it had)."""
        self._stop.set()

    def _finish(self, dataset: Dataset | None = None, profile=None, error: Exception | str | None = None,
                cancelled: bool = False) -> None:
        if cancelled:
            self.run_state = "cancelled"
        elif error is not None:
            self.param.update(run_state="failed", error=str(error))
        else:
            self.explorer.load(dataset, profile)
            self.param.update(run_state="loaded", progress=1.0, in_explorer=not self._edited)
            if self._edited:
                self._say("Loaded the data as it was when Run was pressed: Run again for the changes made since.")


def source_name(dataset: Dataset) -> str:
    """Where ``dataset`` comes from, as the page names it (a bundled sample by its name)."""
    name = next((n for n, s in SAMPLES.items() if dataset.source and Path(dataset.source) == s.path), None)
    return f"sample: {name}" if name else (dataset.source or "a table given to the dashboard")


def too_big(filename: str, size: int, cap: int = MAX_UPLOAD_BYTES, *, at_least: bool = False) -> str:
    """Why a file is refused (``at_least``: ``size`` is what arrived before the upload was stopped)."""
    return (f"{filename} is {'at least ' if at_least else ''}{size / 1e6:.1f} MB; uploads are limited to "
            f"{cap / 1e6:.0f} MB (use the command line for larger files)")
