"""A study's description: which tables, which columns play which part (read from TOML).

A *study* is the patent's data: one entity table (one row per entity), any number of relational
*satellite tables* (rows keyed by the entity id, each with its own QIs) and any number of *event
tables* (entity id, sequence key, time, one or more code columns). The TOML form (one key per line; the bundled ``sample_data/study/study.toml`` is a complete one)::

    [entities]                       # name = output file stem (default "entities")
    name = "patients"
    file = "patients.csv"
    id = "patient_id"
    qi = ["age", "sex", "zip"]
    identifiers = ["name"]
    keep = []
    drop = ["cost"]
    hierarchy_dir = "."              # and/or hierarchies = { age = "age.csv" }

    [[satellites]]                   # any number; id defaults to [entities].id
    name = "insurance"
    file = "insurance.csv"
    qi = ["plan", "since"]
    identifiers = ["policy_number"]

    [[events]]                       # at least one
    name = "diagnoses"
    file = "diagnoses.csv"
    sequence_key = "visit_id"
    time = "date"
    codes = ["icd"]

    [anonymization]                  # optional: k, variant, relative_time, weights = {relational, sequence, time}

Paths are relative to the TOML file's folder and stay inside it (no absolute path, no ``..``). Every key is checked: an unknown one is refused by
name (a misspelt ``identifers`` must not leave a name column unprotected).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from microrelease.core.exceptions import DataError

ENTITY_KEYS = {"name", "file", "id", "qi", "identifiers", "keep", "drop", "hierarchies", "hierarchy_dir"}
SATELLITE_KEYS = {"name", "file", "id", "qi", "identifiers", "drop", "hierarchies", "hierarchy_dir"}
EVENT_KEYS = {"name", "file", "id", "sequence_key", "time", "codes", "identifiers", "drop", "hierarchies",
              "hierarchy_dir"}
ANONYMIZATION_KEYS = {"k", "variant", "relative_time", "weights"}
WEIGHTS = {"relational", "sequence", "time"}  # CostWeights' fields
GROUPING_METHODS = ("greedy", "ranking")  # grouping.VARIANTS (not imported: reading a study needs no kernels)


@dataclass(frozen=True)
class TableSpec:
    """One table of a study. ``codes``, ``sequence_key`` and ``time`` are for event tables; ``qi``
    and ``keep`` for the entity and satellite tables (``keep``: the entity table only)."""

    name: str
    file: Path
    id: str
    qi: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    hierarchies: Mapping[str, Path] = field(default_factory=dict)
    hierarchy_dir: Path | None = None
    sequence_key: str = ""
    time: str = ""
    codes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Study:
    """The tables of a study and its optional ``[anonymization]`` settings (``source``: the TOML file)."""

    entities: TableSpec
    satellites: tuple[TableSpec, ...]
    events: tuple[TableSpec, ...]
    anonymization: Mapping[str, object]
    source: Path | None = None

    @property
    def tables(self) -> tuple[TableSpec, ...]:
        return (self.entities, *self.satellites, *self.events)

    @property
    def files(self) -> list[Path]:
        """Every input file: tables and hierarchies (protected from being overwritten)."""
        out = [t.file for t in self.tables] + [p for t in self.tables for p in t.hierarchies.values()]
        return out + ([self.source] if self.source else [])


def _where(section: str, index: int | None) -> str:
    return f"[{section}]" if index is None else f"[[{section}]] number {index + 1}"


def _text(value, key: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise DataError(f"{where}: '{key}' must be a non-empty text, got {value!r}", parameter="config")
    return value


def _names(value, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise DataError(f"{where}: '{key}' must be a list of column names, got {value!r}", parameter="config")
    return tuple(value)


def _inside(folder: Path, text: str, key: str, where: str) -> Path:
    """``text``, a path written in the study file, under the study's folder: relative and without ``..``
    (a study file from someone else must not make the program open files elsewhere, /etc/passwd say)."""
    path = Path(text)
    if path.is_absolute() or ".." in path.parts:
        raise DataError(f"{where}: '{key}' {text!r} must be a path relative to the study file's folder, inside it "
                        "(no absolute path, no '..')", parameter="config")
    return folder / path


def _table(raw, section: str, index: int | None, allowed: set[str], folder: Path, default_id: str | None,
           default_name: str | None = None) -> TableSpec:
    where = _where(section, index)
    if not isinstance(raw, dict):
        raise DataError(f"{where} must be a table of keys, got {raw!r}", parameter="config")
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise DataError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}", parameter="config")
    name = _text(raw.get("name", default_name), "name", where)
    if not name.replace("_", "").replace("-", "").isalnum():
        raise DataError(f"{where}: 'name' {name!r} must be letters, digits, '-' or '_' (it names the output file)",
                        parameter="config")
    entity_id = raw.get("id", default_id)
    hierarchies = raw.get("hierarchies", {})
    if not isinstance(hierarchies, dict) or not all(isinstance(v, str) for v in hierarchies.values()):
        raise DataError(f"{where}: 'hierarchies' must map columns to files, got {hierarchies!r}", parameter="config")
    lists = {key: _names(raw.get(key, []), key, where) for key in ("qi", "identifiers", "keep", "drop", "codes")
             if key in allowed}
    return TableSpec(name, _inside(folder, _text(raw.get("file"), "file", where), "file", where),
                     _text(entity_id, "id", where),
                     hierarchies={c: _inside(folder, p, f"hierarchies.{c}", where) for c, p in hierarchies.items()},
                     hierarchy_dir=_inside(folder, _text(raw["hierarchy_dir"], "hierarchy_dir", where), "hierarchy_dir",
                                           where) if "hierarchy_dir" in raw else None,
                     sequence_key=_text(raw.get("sequence_key"), "sequence_key", where) if "sequence_key" in allowed
                     else "", time=_text(raw.get("time"), "time", where) if "time" in allowed else "", **lists)


def parse_study(raw: Mapping, folder: Path, source: Path | None = None) -> Study:
    """A ``Study`` from the parsed TOML (see the module docstring).

    Parameters
    ----------
    raw : mapping
        The parsed TOML.
    folder : Path
        The folder the table paths are relative to.
    source : Path, optional
        The TOML file, for messages.

    Returns
    -------
    Study
        The study.

    Raises
    ------
    DataError
        If an entry is missing or invalid.
    """
    unknown = sorted(set(raw) - {"entities", "satellites", "events", "anonymization"})
    if unknown:
        raise DataError(f"unknown section(s) {unknown}; a study has [entities], [[satellites]], [[events]] and "
                        "[anonymization]", parameter="config")
    if "entities" not in raw:
        raise DataError("the study has no [entities] table", parameter="config")
    entities = _table(raw["entities"], "entities", None, ENTITY_KEYS, folder, None, "entities")
    if not entities.qi:
        raise DataError("[entities]: 'qi' names no quasi-identifier", parameter="config")
    satellites = tuple(_table(t, "satellites", i, SATELLITE_KEYS, folder, entities.id)
                       for i, t in enumerate(_list(raw.get("satellites", []), "satellites")))
    events = tuple(_table(t, "events", i, EVENT_KEYS, folder, entities.id)
                   for i, t in enumerate(_list(raw.get("events", []), "events")))
    if not events:
        raise DataError("the study has no [[events]] table", parameter="config")
    names = [t.name for t in (entities, *satellites, *events)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DataError(f"table name(s) {twice} used twice: each names an output file", parameter="config")
    folded = [n.casefold() for n in names]
    alike = sorted({n for n in names if folded.count(n.casefold()) > 1})
    if alike:
        raise DataError(f"table names {alike} differ only in case: their output files would collide on some file "
                        "systems", parameter="config")
    return Study(entities, satellites, events, _settings(raw.get("anonymization", {})), source)


def _settings(settings) -> dict:
    """The [anonymization] table, each value checked (a misspelt weight or a text for a flag is refused)."""
    if not isinstance(settings, dict) or set(settings) - ANONYMIZATION_KEYS:
        unknown = sorted(set(settings) - ANONYMIZATION_KEYS) if isinstance(settings, dict) else settings
        raise DataError(f"[anonymization]: unknown key(s) {unknown}; allowed: {sorted(ANONYMIZATION_KEYS)}",
                        parameter="config")
    k = settings.get("k", 1)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise DataError(f"[anonymization]: 'k' must be a whole number >= 1, got {k!r}", parameter="config")
    if settings.get("variant", "greedy") not in GROUPING_METHODS:
        raise DataError(f"[anonymization]: 'variant' must be one of {list(GROUPING_METHODS)}, got {settings['variant']!r}",
                        parameter="config")
    if not isinstance(settings.get("relative_time", False), bool):
        raise DataError(f"[anonymization]: 'relative_time' must be true or false (not text), got "
                        f"{settings['relative_time']!r}", parameter="config")
    weights = settings.get("weights", {})
    if not isinstance(weights, dict) or set(weights) - WEIGHTS or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in weights.values()):
        raise DataError(f"[anonymization]: 'weights' must map some of {sorted(WEIGHTS)} to numbers, got {weights!r}",
                        parameter="config")
    return dict(settings)


def _list(value, section: str) -> list:
    if not isinstance(value, list):
        raise DataError(f"[[{section}]] must be an array of tables", parameter="config")
    return value


def read_study(path: str | Path) -> Study:
    """Read a study's TOML file (see the module docstring); DataError naming what is wrong.

    Parameters
    ----------
    path : str or Path
        The study's TOML file.

    Returns
    -------
    Study
        The study.

    Raises
    ------
    DataError
        If the file is unreadable or an entry invalid.
    """
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"no study file {str(path)!r}", parameter="config") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path.name} is not valid TOML: {exc}", parameter="config") from None
    return parse_study(raw, path.parent, path)
