"""Shared plotting setup: HoloViews on the Bokeh canvas backend (WebGL is pathologically slow in
headless and software-GL browsers: ../shared/docs/panel.md §6).

We register HoloViews' Bokeh backend without ``hv.extension()``: that call is for notebooks and
switches Bokeh's resources to the CDN, which a served app must never use (it works offline).
"""

from __future__ import annotations

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the backend)

hv.Store.set_current_backend("bokeh")
hv.renderer("bokeh").webgl = False
CANVAS = {"plot.output_backend": "canvas"}
