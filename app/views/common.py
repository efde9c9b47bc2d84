"""Shared plotting setup: HoloViews on the Bokeh canvas backend (WebGL is pathologically slow in
headless and software-GL browsers: seconds per frame for a few hundred nodes).

We register HoloViews' Bokeh backend without ``hv.extension()``: that call is for notebooks and
switches Bokeh's resources to the CDN, which a served app must never use (it works offline).
"""

from __future__ import annotations

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the backend)
import pandas as pd
import panel as pn
import param

from microrelease.app.state import Explorer

hv.Store.set_current_backend("bokeh")
hv.renderer("bokeh").webgl = False
CANVAS = {"plot.output_backend": "canvas"}


class NodePicker(pn.viewable.Viewer):
    """A view whose ``points()`` draws nodes (one row of ``self._frame`` each, with a ``node`` column);
    tapping a point selects that node in the shared Explorer."""

    explorer = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self._frame = pd.DataFrame()
        self._points = hv.DynamicMap(self.points)
        self.selection = hv.streams.Selection1D(source=self._points)
        self.selection.param.watch(self._on_tap, "index")

    def points(self):
        raise NotImplementedError

    def _on_tap(self, event) -> None:
        if event.new and len(self._frame):
            self.explorer.selected = int(self._frame["node"].iloc[event.new[0]])
