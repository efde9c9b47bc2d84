"""The dashboard's tabs: one folder per tab, each a ``state.py`` (param only) and a ``view.py`` (Panel).

The ordered registry of tabs is ``microrelease.app.tabs.tab_registry.TABS`` (kept out of this file
so that importing a tab's state does not import every view, nor Panel).
"""
