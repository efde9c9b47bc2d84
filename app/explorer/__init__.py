"""The shared lattice explorer: one dataset, its profile and the (k, MaxSup, policy, models) question.

``state.py`` holds ``Explorer`` (param only); the lattice tabs' states refer to it. The views
every lattice tab shares sit beside it: the sidebar that asks the question (``sidebar.py``), the
summary line above the tabs (``summary.py``), the selected node's details (``details.py``) and the
tap-to-select base of the plots (``picker.py``).
"""
