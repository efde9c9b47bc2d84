"""How the dashboard looks: the status colours and the plotting setup every view shares.

HoloViews draws on the Bokeh canvas backend (WebGL is pathologically slow in headless and
software-GL browsers: seconds per frame for a few hundred nodes). The backend is registered without
``hv.extension()``: that call is for notebooks and switches Bokeh's resources to the CDN, which a
served app must never use (it works offline).
"""

from __future__ import annotations

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the backend)
from bokeh.models import BasicTicker, LogTicker

hv.Store.set_current_backend("bokeh")
hv.renderer("bokeh").webgl = False
CANVAS = {"plot.output_backend": "canvas"}

# One colour per entry of microrelease.app.explorer.explorer.STATUS.
STATUS_COLORS = {"fails": "#bdbdbd", "satisfies": "#6baed6", "k-minimal": "#fd8d3c", "preferred": "#d62728",
                 "fails privacy model": "#9e9ac8"}
SELECTED = "#000000"  # ring of the selected node
TESTED = "#2ca02c"  # ring of the vectors tested by the Find_vector probe shown (and the height it tried)
RING = {"fill_alpha": 0, "line_width": 3, "nonselection_alpha": 1.0, "selection_alpha": 1.0}  # a ring, not a dot
EDGE = {"color": "#cccccc", "line_width": 1}  # a direct generalization step between two drawn nodes
PATH = {"color": "#999999", "line_width": 1, "line_dash": "dashed"}  # a path through nodes not drawn
BAND = {"color": TESTED, "alpha": 0.12}  # the height a Find_vector probe tried
BOUND = {"color": "#444444", "line_dash": "dashed"}  # a theoretical bound (1/k) or the Pareto front
MARKER = {"color": "#999999", "line_dash": "dotted"}  # the current k on a curve's axis


def integer_ticks(log: bool = False) -> BasicTicker | LogTicker:
    """Ticks on whole numbers only (a height, a class size or a count of 0.5 means nothing)."""
    return (LogTicker if log else BasicTicker)(min_interval=1, num_minor_ticks=0)
