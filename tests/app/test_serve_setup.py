"""What ``serve`` does before the first request, and the sidebar's boxes apply a value at once: the two
settings that keep a k change within its 150 ms (benchmarks/dashboard.py measures it)."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from browser_util import free_port  # noqa: E402

from microrelease.app import serve as serving  # noqa: E402
from microrelease.app.main import Dashboard  # noqa: E402


class Served(Exception):
    """Raised in place of starting the server: the test looks at what was done before."""


def test_what_the_server_loaded_before_its_first_page_is_out_of_the_collectors_full_passes(monkeypatch):
    import panel.reactive

    from microrelease.app.main import sample_with_profile

    seen = {}

    def fake_serve(*_args, **_kwargs):
        raise Served

    monkeypatch.setattr(serving.pn, "serve", fake_serve)
    monkeypatch.setattr(serving, "warm_tabs", lambda: None)
    monkeypatch.setattr(panel.reactive, "CDN_DIST", panel.reactive.CDN_DIST)  # serve() points it at itself
    # frozen once the sample and its profile are loaded (what a session would otherwise rescan), not before
    monkeypatch.setattr(serving.gc, "freeze", lambda: seen.setdefault("loaded", sample_with_profile.cache_info().currsize))
    sample_with_profile.cache_clear()
    with pytest.raises(Served):
        serving.serve(port=free_port(), sample="samarati")
    assert seen == {"loaded": 1}


def test_a_number_typed_in_the_sidebar_is_applied_without_panels_wait_for_more_events():
    sidebar = Dashboard(sample="samarati").sidebar
    boxes = [sidebar.k_input, sidebar.sup_rows, sidebar.sup_pct, *(sidebar.boxes[n] for n in ("l", "c", "t"))]
    # Panel reads _debounce (ms) before it applies an event from the page; its default is 50
    assert all(box._debounce == 0 for box in boxes)
    assert pn.widgets.IntInput._debounce == 50 == pn.widgets.FloatInput._debounce
