"""Read and write hierarchies in ARX's CSV format.

ARX format: ``;``-separated, no header, one row per ground value; column j is that value's
generalization at level j. The bundled adult hierarchies use it. The format has no level names, so
a hierarchy read from it names its levels by example (``names.default_level_names``).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from microrelease.core.exceptions import DataError, HierarchyError
from microrelease.core.lattice.hierarchies.hierarchy import Hierarchy


def read_arx(source: str | Path | io.TextIOBase, attribute: str, *, sep: str = ";") -> Hierarchy:
    """Read an ARX hierarchy file (a path or an open text stream).

    Blank lines are skipped; any other malformation (ragged rows, duplicates, two parents, several
    top values) raises ``HierarchyError`` naming ``attribute``.

    Parameters
    ----------
    source : str, Path or text file
        The ARX hierarchy file (one row per value, a column per level).
    attribute : str
        The attribute the hierarchy generalizes.
    sep : str, default ";"
        The file's separator.

    Returns
    -------
    Hierarchy
        The hierarchy read.

    Raises
    ------
    HierarchyError
        If the file is missing, not UTF-8 or not a valid hierarchy.
    DataError
        If a line cannot be read as CSV.
    """
    if isinstance(source, str | Path):
        path = Path(source)
        if not path.is_file():
            raise HierarchyError(attribute, f"file not found: {path}")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise HierarchyError(attribute, f"{path} is not UTF-8 text ({exc})") from None
    else:
        path, text = None, source.read()
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    try:
        rows = [tuple(r) for r in reader if r]
    except csv.Error as exc:  # e.g. a field over csv.field_size_limit(): not a hierarchy file?
        name = f"hierarchy file {path}" if path else "the hierarchy"
        raise DataError(f"{name} of {attribute!r}: line {reader.line_num} cannot be read as CSV ({exc})") from None
    # no names in the format: levels read "level j (e.g. 9413*)" from the file's own values
    return Hierarchy(attribute, tuple(rows))


def write_arx(hierarchy: Hierarchy, target: str | Path | io.TextIOBase, *, sep: str = ";") -> None:
    """Write ``hierarchy`` in ARX's format (readable back by ``read_arx``).

    Parameters
    ----------
    hierarchy : Hierarchy
        The hierarchy to write.
    target : str, Path or text file
        Where to write it.
    sep : str, default ";"
        The separator.
    """
    if isinstance(target, str | Path):
        with open(target, "w", encoding="utf-8", newline="") as fh:
            write_arx(hierarchy, fh, sep=sep)
        return
    writer = csv.writer(target, delimiter=sep, lineterminator="\n")
    writer.writerows(hierarchy.rows)


def find_hierarchy_file(directory: str | Path, attribute: str) -> Path | None:
    """The file for ``attribute`` in a hierarchy folder: ``*_hierarchy_<A>.csv`` or ``<A>.csv``."""
    directory = Path(directory)
    exact = directory / f"{attribute}.csv"
    matches = sorted(directory.glob(f"*_hierarchy_{attribute}.csv"))
    candidates = ([exact] if exact.is_file() else []) + matches
    if len(candidates) > 1:
        raise HierarchyError(attribute, f"several hierarchy files in {directory}: {[c.name for c in candidates]}")
    return candidates[0] if candidates else None
