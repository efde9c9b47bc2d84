"""What ``serve`` does before the first request, and the sidebar's boxes apply a value at once: the two
settings that keep a k change within its 150 ms (benchmarks/dashboard.py measures it)."""

from __future__ import annotations

import gc

import pytest

pn = pytest.importorskip("panel")

from browser_util import free_port  # noqa: E402

from microrelease.app import serve as serving  # noqa: E402
from microrelease.app.main import Dashboard  # noqa: E402


class Served(Exception):
    """Raised in place of starting the server: the test looks at what was done before."""


def test_what_the_server_loaded_before_its_first_page_is_out_of_the_collectors_full_passes(monkeypatch):
    seen = {}

    def fake_serve(*_args, **_kwargs):
        seen["frozen"] = gc.get_freeze_count()
        raise Served

    monkeypatch.setattr(serving.pn, "serve", fake_serve)
    monkeypatch.setattr(serving, "warm_tabs", lambda: None)
    before = gc.get_freeze_count()
    try:
        with pytest.raises(Served):
            serving.serve(port=free_port(), sample="samarati")
    finally:
        gc.unfreeze()  # the rest of the test session collects as usual
    assert before == 0 and seen["frozen"] > 0


def test_a_number_typed_in_the_sidebar_is_applied_without_panels_wait_for_more_events():
    sidebar = Dashboard(sample="samarati").sidebar
    boxes = [sidebar.k_input, sidebar.sup_rows, sidebar.sup_pct, sidebar.l_value, sidebar.c_value, sidebar.t_value]
    # Panel reads _debounce (ms) before it applies an event from the page; its default is 50
    assert all(box._debounce == 0 for box in boxes)
    assert pn.widgets.IntInput._debounce == 50 == pn.widgets.FloatInput._debounce
