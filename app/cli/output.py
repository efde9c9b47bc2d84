"""What every writing command shares: the paths that must never be written, and the closing lines.

The writing itself is the core's one release path (``microrelease.core.release.publishing``); a
command only gathers the paths to protect and reports what the core checked.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

from microrelease.app.cli.flags import FLAGS
from microrelease.app.cli.options import OutputRequest
from microrelease.core.exceptions import HierarchyError, OutputError
from microrelease.core.lattice.hierarchies import find_hierarchy_file
from microrelease.core.lattice.reference import figures_line
from microrelease.core.release import Published


def protected_paths(inputs: Iterable[str | Path | None], hierarchy_dir: str | Path | None = None,
                    attributes: Iterable[str] = ()) -> list[Path]:
    """The inputs and hierarchy files of a command: a release never overwrites or holds them."""
    paths = [Path(p) for p in inputs if p]
    if hierarchy_dir:
        for name in attributes:
            try:
                found = find_hierarchy_file(hierarchy_dir, name)
            except HierarchyError:  # several candidates: reading the hierarchies refuses them before any write
                found = None
            if found is not None:
                paths.append(found)
    return paths


def refuse_hierarchy_names(out: str | Path, hierarchy_dir: str | Path | None, attributes: Iterable[str]) -> None:
    """An output named like a hierarchy file in the hierarchy folder would be read as one next time."""
    out = Path(out)
    if hierarchy_dir and out.parent.resolve() == Path(hierarchy_dir).resolve():
        clash = [a for a in attributes if out.name == f"{a}.csv" or out.name.endswith(f"_hierarchy_{a}.csv")]
        if clash:
            raise OutputError(f"{out} would be read as the hierarchy of {clash[0]!r} from {hierarchy_dir} next time; "
                              "choose another name (nothing was written)")


def finish(published: Published, output: OutputRequest, summary: str) -> int:
    """Warn about formula cells, then print the report (--json) or ``summary`` and the checks."""
    report = published.data
    formulas = report.get("formula_cells", {})
    if formulas.get("unescaped"):
        columns = ", ".join(f"{c} ({v['unescaped']})" for c, v in formulas["by_column"].items() if v["unescaped"])
        print(f"microrelease: warning: {formulas['unescaped']} released cell(s) start with =, +, -, @, tab or CR "
              f"and would run as formulas in a spreadsheet: {columns}; {FLAGS['escape']} writes them with a "
              "leading '", file=sys.stderr)
    reference = report.get("reference_distribution", {})
    if reference.get("published"):
        print(f"microrelease: warning: the report publishes the input's counts of {reference['attribute']!r} "
              f"({FLAGS['publish_reference']}): minus the released file's counts they give the sensitive values of "
              f"the {report['counts']['suppressed_rows']} suppressed row(s), exactly when few rows are suppressed; "
              "keep such a report private", file=sys.stderr)
    if output.json:
        print(json.dumps(report, indent=2))
        return 0
    print(summary)
    print(f"report: {published.target.report}; to read and print: {published.target.html}")
    if published.audit is not None:
        print(f"audit (for you, never to publish: exact figures of the original data): {published.target.audit}")
    print(f"re-checked on the written file: {', '.join(published.verifications)}" + _reference_figures(report))
    return 0


def _reference_figures(report: dict) -> str:
    """Both figures of a model measured against the input's distribution: against it, and against the file's."""
    models = report.get("reference_distribution", {}).get("models", {})
    return "".join(f"; {name}: {figures_line(figures)}" for name, figures in models.items())
