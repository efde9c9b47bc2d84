"""The base of the plots where a tap selects a node through HoloViews (the trade-off plot; the lattice
is plain Bokeh, see ``microrelease.app.tabs.lattice.figure``)."""

from __future__ import annotations

import holoviews as hv
import pandas as pd
import panel as pn
import param


class NodePicker(pn.viewable.Viewer):
    """A view whose ``points()`` draws nodes (one row of ``self._frame`` each, with a ``node`` column);
    tapping a point selects that node in the shared Explorer (``state.explorer``)."""

    state = param.Parameter(doc="the tab's state; its ``explorer`` is the shared Explorer")

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
            self.state.explorer.selected = int(self._frame["node"].iloc[event.new[0]])
