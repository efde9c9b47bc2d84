"""State of the Data tab (no Panel): the table, column roles and one hierarchy per QI, before a run.

Everything a user picks is checked here with the core's own validators, so the page can show which
data values a hierarchy misses before anything runs.
"""

from __future__ import annotations

import io

import pandas as pd
import param

from microrelease.core import Dataset, Hierarchy, dates, intervals, masking, read_arx, taxonomy
from microrelease.core.data.dataset import detect_separator, read_table
from microrelease.core.data.roles import AttributeRole, Schema
from microrelease.core.data.samples import SAMPLES, sample
from microrelease.core.exceptions import DataError, HierarchyError
from microrelease.core.lattice.hierarchies import MISSING, find_hierarchy_file

MAX_UPLOAD_BYTES = 50 * 1024 * 1024
ROLES = [r.value for r in AttributeRole]
BUILDERS = ("intervals", "masking", "dates", "taxonomy")


class DataSetup(param.Parameterized):
    """A table with roles and hierarchies being prepared; :meth:`dataset` makes the core Dataset."""

    source = param.String(default="")
    table = param.DataFrame(default=None, allow_None=True)
    roles = param.Dict(default={})
    hierarchies = param.Dict(default={})
    message = param.String(default="")

    def load_sample(self, name: str) -> None:
        s = sample(name)
        table = read_table(s.path)
        roles = {c: ("quasi-identifier" if c in s.qi else "sensitive" if c in s.sensitive else "insensitive")
                 for c in table.columns}
        found = {q: read_arx(f, q) for q in s.qi if (f := find_hierarchy_file(s.folder, q)) is not None}
        with param.parameterized.batch_call_watchers(self):
            self.source, self.table, self.roles, self.hierarchies = f"sample: {name}", table, roles, found
            self.message = f"Loaded the {SAMPLES[name].description} with its hierarchies."

    def load_csv(self, content: bytes, filename: str) -> None:
        """An uploaded CSV: size-capped, separator detected, every cell kept as text."""
        if len(content) > MAX_UPLOAD_BYTES:
            raise DataError(f"{filename} is {len(content) / 2**20:.1f} MB; uploads are limited to "
                            f"{MAX_UPLOAD_BYTES // 2**20} MB (use the command line for larger files)")
        text = content.decode("utf-8-sig", errors="replace")
        sep = detect_separator(text[:64_000])
        try:
            table = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise DataError(f"{filename} is not a well-formed CSV with separator {sep!r}: {exc}") from None
        if len(table) == 0:
            raise DataError(f"{filename} has no rows")
        with param.parameterized.batch_call_watchers(self):
            self.source, self.table, self.hierarchies = filename, table, {}
            self.roles = {c: "insensitive" for c in table.columns}
            self.message = f"Read {len(table)} rows × {len(table.columns)} columns from {filename} (separator {sep!r})."

    @property
    def quasi_identifiers(self) -> list[str]:
        return [c for c, r in self.roles.items() if r == "quasi-identifier"]

    def set_role(self, column: str, role: str) -> None:
        if role not in ROLES:
            raise DataError(f"unknown role {role!r} for column {column!r}; choose one of {ROLES}")
        self.roles = {**self.roles, column: role}

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
        return h

    def load_hierarchy(self, qi: str, content: bytes) -> Hierarchy:
        h = read_arx(io.StringIO(content.decode("utf-8-sig")), qi)
        self.hierarchies = {**self.hierarchies, qi: h}
        return h

    def missing(self, qi: str) -> dict[str, int]:
        """Data values of ``qi`` that its hierarchy lacks (with row counts), before anything runs."""
        h = self.hierarchies.get(qi)
        if h is None:
            return {}
        column = self.values(qi)
        return h.with_missing().missing_values(column) if (column == MISSING).any() else h.missing_values(column)

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
