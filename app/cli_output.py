"""What every writing command of the CLI shares: the output options, the paths that must never be
written, the closing lines, and the signals that end a write cleanly.

The writing itself is the core's one release path (:func:`microrelease.core.release.publish`); a
command only gathers the paths to protect and reports what the core checked.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Iterable
from pathlib import Path

from microrelease.core.lattice.hierarchies import find_hierarchy_file
from microrelease.core.release import Published


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``finally`` runs (temporary files go)."""


def _on_sigterm(signum, frame):  # noqa: ARG001 - the signal module's signature
    raise Terminated()


def install_signal_handlers() -> None:
    """SIGTERM becomes :class:`Terminated`; SIGINT is Python's KeyboardInterrupt already."""
    signal.signal(signal.SIGTERM, _on_sigterm)


def add_output_options(p: argparse.ArgumentParser, *, folder: bool = False) -> None:
    what = "a new or empty output folder" if folder else "the output file"
    p.add_argument("--force", action="store_true",
                   help=f"replace a previous release of microrelease at {what}; nothing else is ever overwritten")
    p.add_argument("--escape-formulas", action="store_true",
                   help="write text cells that a spreadsheet would run as formulas (=, +, -, @, tab, CR) with a "
                        "leading ' (recorded in the report)")


def protected_paths(data: Iterable[str | Path | None], hierarchies: Iterable[str | Path] = (),
                    hierarchy_dir: str | Path | None = None, attributes: Iterable[str] = ()) -> list[Path]:
    """The inputs and hierarchy files of a command: a release never overwrites or holds them."""
    paths = [Path(p) for p in data if p]
    paths += [Path(p) for p in hierarchies]
    if hierarchy_dir:
        for name in attributes:
            try:
                found = find_hierarchy_file(hierarchy_dir, name)
            except ValueError:
                found = None
            if found is not None:
                paths.append(found)
    return paths


def refuse_hierarchy_names(out: str | Path, hierarchy_dir: str | Path | None, attributes: Iterable[str]) -> None:
    """An output named like a hierarchy file in the hierarchy folder would be read as one next time."""
    from microrelease.core.exceptions import OutputError

    out = Path(out)
    if hierarchy_dir and out.parent.resolve() == Path(hierarchy_dir).resolve():
        clash = [a for a in attributes if out.name == f"{a}.csv" or out.name.endswith(f"_hierarchy_{a}.csv")]
        if clash:
            raise OutputError(f"{out} would be read as the hierarchy of {clash[0]!r} from {hierarchy_dir} next time; "
                              "choose another name (nothing was written)")


def finish(published: Published, args, summary: str) -> int:
    """Warn about formula cells, then print the report (--json) or ``summary`` and the checks."""
    report = published.data
    formulas = report.get("formula_cells", {})
    if formulas.get("unescaped"):
        columns = ", ".join(f"{c} ({v['unescaped']})" for c, v in formulas["by_column"].items() if v["unescaped"])
        print(f"microrelease: warning: {formulas['unescaped']} released cell(s) start with =, +, -, @, tab or CR "
              f"and would run as formulas in a spreadsheet: {columns}; --escape-formulas writes them with a "
              "leading '", file=sys.stderr)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(summary)
    print(f"re-checked on the written file: {', '.join(published.checks)}")
    return 0
