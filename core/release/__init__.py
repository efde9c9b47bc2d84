"""How releases reach the disk: one path for every kind of release (see ``.publishing``), the rules
that keep a user's files safe (``.target``), what every released table goes through (random
row order, spreadsheet formula cells: ``.cells``), and the page a person reads beside the JSON
report (``.report_html``, built with ``.html``; the risk figures from ``.class_risk``)."""

from microrelease.core.release.cells import (
    escape_formulas,
    formula_cells,
    shuffled,
    with_formula_verification,
)
from microrelease.core.release.publishing import Published, Verification, Verified, publish
from microrelease.core.release.target import (
    Target,
    audit_path,
    file_target,
    folder_target,
    html_path,
    previous_release,
    report_path,
)

__all__ = ["Verification", "Published", "Target", "Verified", "audit_path", "escape_formulas", "file_target", "folder_target",
           "formula_cells", "html_path", "previous_release", "publish", "report_path", "shuffled", "with_formula_verification"]
