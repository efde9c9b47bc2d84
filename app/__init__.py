"""microrelease.app: the command line and the Panel dashboard over microrelease.core.

The dashboard objects are imported lazily so that the command line does not pay for Panel.
"""

from __future__ import annotations

__all__ = ["Dashboard", "Explorer", "create_app", "lattice_view", "serve", "tradeoff_view"]


def __getattr__(name: str):
    if name == "Explorer":
        from microrelease.app.explorer.explorer import Explorer  # heavy: panel

        return Explorer
    if name == "serve":
        from microrelease.app.serve import serve  # heavy: panel

        return serve
    if name in {"Dashboard", "create_app", "lattice_view", "tradeoff_view"}:
        from microrelease.app import main  # heavy: panel

        return getattr(main, name)
    raise AttributeError(f"module 'microrelease.app' has no attribute {name!r}")
