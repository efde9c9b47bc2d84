"""The Explorer on a lattice too large for the profile (the core's rule): answered by the pruned search
with one warm evaluator, drawn as the evaluated frontier, the tabs that read every node's figures off.
A 10-QI table of 3,000 rows (38,880 nodes, over the profile's threshold) keeps these fast; the served
12-QI table is tests/app/test_browser_large.py's."""

from __future__ import annotations

import threading

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.explorer.large import DRAW_CAP, large_lattice  # noqa: E402
from microrelease.app.main import Dashboard  # noqa: E402
from microrelease.app.tabs.lattice.lattice_state import LatticeState  # noqa: E402
from microrelease.app.wide import wide_dataset  # noqa: E402
from microrelease.core import load_sample  # noqa: E402
from microrelease.core.search import search_pruned  # noqa: E402
from microrelease.core.search.strategy import PROFILE_NODES  # noqa: E402
from microrelease.core.search.tags import EVALUATED  # noqa: E402


@pytest.fixture(scope="module")
def wide():
    return wide_dataset(10, rows=3000)


def same_answer(e: Explorer, policy: str) -> None:
    core = search_pruned(e.dataset, e.k, e.max_sup, policy)
    assert e.answer.k_minimal_indices.tolist() == core.k_minimal_indices.tolist()
    assert list(e.lattice.node(e.preferred)) == list(core.preferred(policy).vector)


def test_the_rule_is_the_cores(wide):
    assert wide.lattice.size > PROFILE_NODES and large_lattice(wide)
    assert not large_lattice(load_sample("adult"))  # 12,960 nodes: the profile, as before


def test_questions_are_answered_by_the_pruned_search_with_one_evaluator(wide):
    e = Explorer(wide, k=5, max_sup=30)
    assert e.large and e.profile is None
    evaluator = e.searcher.evaluator
    same_answer(e, "min-relative")
    e.k = 10
    same_answer(e, "min-relative")
    assert e.answer.pruned.search.evaluator is evaluator  # the warm cache serves every question
    searched = e.answer
    e.policy = "min-absolute"  # among the k-minimal nodes: the same tags, no new search
    assert e.answer is searched
    same_answer(e, "min-absolute")
    e.policy = "loss"
    assert e.answer is not searched
    same_answer(e, "loss")
    e.max_sup = 0
    same_answer(e, "loss")


def test_the_lattice_draws_the_evaluated_frontier(wide):
    e = Explorer(wide, k=5, max_sup=30)
    state = LatticeState(explorer=e)
    ids = np.fromiter(state.drawn_graph().nodes, dtype=np.int64)
    assert state.effective_view() == "evaluated"
    assert 0 < len(ids) <= DRAW_CAP
    assert e.preferred in ids and np.isin(e.answer.k_minimal_indices[:10], ids).all()
    assert (e.answer.pruned.search.status[ids] & EVALUATED).all()  # only nodes the search evaluated
    frame = state.drawn_frame()
    core = search_pruned(wide, 5, 30)
    first = int(frame["node"].iloc[0])
    assert frame["suppressed"].iloc[0] == core.node(first).suppressed
    bars = state.overview()  # every node counted, from the tags
    assert bars[["fails", "satisfies", "k-minimal"]].to_numpy().sum() == wide.lattice.size


def test_a_search_can_be_cancelled_and_the_shown_answer_stays(wide):
    e = Explorer(wide, k=5, max_sup=30)
    shown = e.answer
    started = []
    e.hand_back = lambda fn: fn()  # a page's hand-back: the search runs on a worker thread
    e._search.start = lambda *args: started.append(args)  # held before it runs: cancelled while "running"
    e.param.update(searching=False)
    e.k = 7
    assert started and not e.searching  # served: flagged (progress and Cancel shown) once it has run a while
    _work, _finish, progress, _hand_back = started[0]
    progress(0.3)  # its first progress report, after SHOW_AFTER
    assert e.searching and e.search_progress == 0.3
    e.cancel_profile()
    assert not e.searching and e.answer is shown
    assert "Cancelled" in e.message and "k = 5" in e.message


def test_the_tabs_that_read_every_nodes_figures_say_why_they_are_off(wide):
    d = Dashboard(dataset=wide)
    assert d.explorer.large
    assert "tradeoff" not in d.views  # never built: it reads every satisfying node's figures
    d.tab = "tradeoff"
    assert "pruned search" in d.step_lines["tradeoff"].object
    d.tab = "lattice"
    assert "pruned search" in d.step_lines["lattice"].object and "k-minimal" in d.step_lines["lattice"].object
    d.explorer.selected = int(d.explorer.preferred)
    assert "Selected node" in d.details.metrics.object
    # the privacy models, k-map and the risk limits go to the pruned search; the view modes read every node
    assert d.sidebar.attribute_models.visible and d.sidebar.risk_models.visible and d.sidebar.k_map_models.visible
    assert not d.sidebar.view_modes.visible and d.sidebar.large_note.visible
    assert d.sidebar.boxes["k_map"].disabled  # no population known for this table: said beside the box


def test_kl_divergence_is_answered_as_the_core_answers_it(wide):
    e = Explorer(wide, k=5, max_sup=30)
    e.policy = "kl-divergence"
    assert not e.message.startswith("Not answered:")
    same_answer(e, "kl-divergence")


def test_the_export_releases_a_node_of_a_large_lattice(wide):
    d = Dashboard(dataset=wide)
    e, export = d.explorer, d.views["export"].state
    e.k, e.max_sup = 5, 30
    assert export.refusal(e.preferred) == ""
    core = search_pruned(wide, 5, 30).preferred("min-relative")
    counts = export.counts()  # the preferred node's release: the rows the core suppresses there
    assert counts["suppressed_rows"] == core.suppressed and counts["released_rows"] == wide.n_rows - core.suppressed


def test_a_large_table_run_from_the_data_tab_is_answered_by_the_pruned_search():
    from microrelease.app.main import sample_with_profile
    from microrelease.app.tabs.data.data_state import DataState

    rng = np.random.default_rng(0)
    columns = [f"c{j}" for j in range(10)]  # masked once then '*': 3^10 = 59,049 nodes
    lines = [",".join(columns), *(",".join(str(rng.integers(10, 13)) for _ in columns) for _ in range(300))]
    state = DataState(explorer=Explorer(*sample_with_profile("samarati"), k=2))
    state.load_csv("\n".join(lines) + "\n", "wide.csv")
    for c in columns:
        state.set_role(c, "quasi-identifier")
        state.build(c, "masking", "1")
    state.run()
    e = state.explorer
    assert state.in_explorer and e.large and e.profile is None and e.lattice.size == 59_049
    same_answer(e, "min-relative")


def test_a_question_asked_again_is_answered_from_the_kept_answers(wide):
    e = Explorer(wide, k=5, max_sup=30)
    first = e.answer
    e.k = 10
    e._search.start = lambda *args: pytest.fail("searched again")  # k = 5 was answered: no worker now
    e.k = 5
    assert e.answer is first and not e.searching


def test_the_sessions_of_a_large_sample_share_its_searcher(monkeypatch, wide):
    from microrelease.app import main

    main.sample_searcher.cache_clear()
    monkeypatch.setattr(main, "sample_with_profile", lambda name: (wide, None))
    main.warm_sample("wide12")  # the server's warm-up: the opening question answered before any session
    searcher = main.sample_searcher("wide12")
    one, two = Dashboard(sample="wide12").explorer, Dashboard(sample="wide12").explorer
    assert one.searcher is two.searcher is searcher
    assert one.answer is two.answer is searcher.known(main.DEFAULT_K, 0, "min-relative", {})[0]
    main.sample_searcher.cache_clear()


def test_a_kept_answer_drops_the_search_still_running_for_an_older_question(wide):
    e = Explorer(wide, k=5, max_sup=30)
    first, pending = e.answer, []
    e.hand_back = pending.append  # the page's loop: what the worker hands back runs later, as served
    e.k = 7  # searched on a worker thread
    e.k = 5  # asked before: shown at once, and the search of k = 7 superseded
    assert e.answer is first and not e.searching
    for thread in threading.enumerate():
        if thread.name == "microrelease-search":
            thread.join(120)
    for fn in pending:  # progress or the answer of k = 7: dropped, a newer question came
        fn()
    assert e.answer is first and e.k == 5 and not e.searching


def test_an_answer_given_here_and_now_is_one_held_change(wide):
    """A question the widget's own callback answers (a kept answer, a policy among the k-minimal nodes) is
    changed under the page's hold: sent change by change, a served page lays itself out again per change."""
    import contextlib

    e = Explorer(wide, k=5, max_sup=30)
    held, seen = [False], []

    @contextlib.contextmanager
    def hold():
        held[0] = True
        try:
            yield
        finally:
            held[0] = False

    e.hold = hold
    e.param.watch(lambda *_: seen.append(held[0]), ["answer", "preferred"])
    e.k = 10
    e.k = 5  # asked before: the kept answer, given in this call
    e.policy = "min-absolute"  # the same tags
    assert seen and all(seen)
