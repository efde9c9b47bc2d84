"""Panel views over :class:`microrelease.app.state.Explorer` (each a small ``pn.viewable.Viewer``)."""
