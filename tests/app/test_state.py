"""The dashboard's state and views without a browser: params, derived data, widgets, callbacks."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pn = pytest.importorskip("panel")

from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.explorer.headline import summary_text  # noqa: E402
from microrelease.app.main import Dashboard, lattice_view, sample_with_profile, tradeoff_view  # noqa: E402
from microrelease.app.tabs.data.data_state import MAX_UPLOAD_BYTES, DataState  # noqa: E402
from microrelease.app.tabs.lattice import graph  # noqa: E402
from microrelease.app.tabs.lattice.lattice_state import LatticeState  # noqa: E402
from microrelease.app.tabs.teaching.teaching_state import PAIRS_EXAMPLE, TeachingState, pairs_check  # noqa: E402
from microrelease.app.tabs.tradeoff.tradeoff_state import TradeoffState, pareto_front  # noqa: E402
from microrelease.core import DataError, check_k_anonymity, load_sample, query  # noqa: E402


@pytest.fixture(autouse=True)
def _reset_panel_state():
    yield
    pn.state.reset()


@pytest.fixture
def samarati_explorer():
    return Explorer(*sample_with_profile("samarati"), k=2)


def test_explorer_answers_from_the_profile(samarati_explorer):
    e = samarati_explorer
    assert e.k_minimal_vectors() == [[0, 2], [1, 1]]
    e.max_sup = 2
    assert e.k_minimal_vectors() == [[0, 1], [1, 0]]
    assert "<span id='kmin'>[0, 1] [1, 0]</span>" in summary_text(e)
    status = e.status()
    assert status[e.preferred] == 3 and set(np.flatnonzero(status == 2)) | {e.preferred} == set(
        np.flatnonzero(e.answer.minimal))


def test_policy_and_weights_change_the_preferred_node(samarati_explorer):
    e = samarati_explorer
    e.max_sup = 2
    e.policy = "weighted"
    e.weights = {"ZIP": 10.0}
    assert e.lattice.node(e.preferred) == (1, 0)  # generalizing ZIP is now costly
    e.k = 9
    e.max_sup = 0
    assert e.lattice.node(e.preferred) == (1, 2)


def test_no_solution_is_shown_not_raised():
    from microrelease.core import Hierarchy, load_dataset

    ds = load_dataset(pd.DataFrame({"a": ["x", "y", "x"]}), qi=["a"], hierarchies={"a": Hierarchy("a", (("x",), ("y",)))})
    e = Explorer(ds, k=2)
    assert e.preferred is None and "no generalization satisfies" in e.message and "⚠" in summary_text(e)


def test_views_open_focused_on_adult_within_the_cap():
    dataset, profile = sample_with_profile("adult")
    e = Explorer(dataset, profile, k=5, max_sup=301)
    lattice = LatticeState(explorer=e)

    def drawn_nodes() -> np.ndarray:  # the nodes the lattice view plots, and the graph its edges come from
        nodes = lattice.drawn_frame()["node"].to_numpy()
        assert set(lattice.drawn_graph().nodes) == set(nodes)
        return nodes

    assert lattice.effective_view() == "focused"
    drawn = drawn_nodes()
    assert len(drawn) <= graph.DRAW_CAP
    assert set(np.flatnonzero(e.answer.minimal)) <= set(drawn)
    # the frontier is k-minimal nodes, failing nodes just below, satisfying nodes just above
    below, above = graph.neighbours(e.lattice, np.flatnonzero(e.answer.minimal))
    for i in drawn:
        assert e.answer.minimal[i] or (i in below and not e.answer.satisfying[i]) or (i in above and e.answer.satisfying[i])
    e.view = "full"
    assert len(drawn_nodes()) == 6480
    e.fixed = {"sex": 1, "age": 4, "race": 1}
    e.view = "sub-lattice"
    sub = drawn_nodes()
    assert len(sub) == 3 * 4 * 3 * 3 * 3 and np.all(e.lattice.grid[sub][:, [0, 1, 2]] == [1, 4, 1])
    e.view = "focused"
    e.selected = int(np.flatnonzero(~e.answer.satisfying)[0])
    e.expanded = [e.selected]
    below, above = graph.neighbours(e.lattice, [e.selected])
    assert set(below) | set(above) | {e.selected} <= set(drawn_nodes())
    rings = lattice.rings()
    assert rings.loc[rings["ring"] == "selected", "vector"].tolist() == [str(list(e.lattice.node(e.selected)))]


def test_pareto_front_against_brute_force():
    rng = np.random.default_rng(3)
    acc, comp = rng.random(60).round(1), rng.random(60).round(1)
    front = pareto_front(acc, comp)
    points = set(zip(acc.tolist(), comp.tolist(), strict=True))
    undominated = {(a, c) for a, c in points if not any(a2 >= a and c2 >= c and (a2, c2) != (a, c) for a2, c2 in points)}
    assert {(acc[i], comp[i]) for i in front} == undominated and len(front) == len(undominated)
    assert np.all(np.diff(acc[front]) > 0)  # drawn left to right


def test_widgets_and_taps_drive_the_state():
    from bokeh.document import Document
    from pyviz_comms import Comm

    app = Dashboard(sample="samarati")
    app.__panel__().get_root(Document(), comm=Comm())
    e = app.explorer
    app.sidebar.k_input.value = 3
    assert e.k == 3
    app.sidebar.k_input.value = 2
    app.sidebar.sup_pct.value = 25.0  # 25% of 9 rows rounds down to 2
    assert e.max_sup == 2 and e.k_minimal_vectors() == [[0, 1], [1, 0]]
    e.max_sup = 0
    assert app.sidebar.sup_pct.value == 0
    # a tap on the lattice's points selects that node and fills the table
    lattice, tradeoff = app.views["lattice"], app.views["tradeoff"]
    fig = lattice.figures[0]  # the lattice figure shown on the page
    row = int(np.flatnonzero(np.asarray(fig.points.data["vector"]) == "[1, 1]")[0])
    fig.tapped.data = {"node": [int(fig.points.data["node"][row])], "at": [1]}  # what a tap sends
    assert e.lattice.node(e.selected) == (1, 1)
    table = app.details.table.value
    assert set(table["Race"]) == {"person"} and set(table["ZIP"]) == {"9413*", "9414*"}
    assert "[1, 1]" in app.details.metrics.object
    # the trade-off plot selects through the same state
    tradeoff.points()
    pick = int(np.flatnonzero(tradeoff._frame["vector"] == "[0, 2]")[0])
    tradeoff.selection.event(index=[pick])
    assert e.lattice.node(e.selected) == (0, 2)


def test_export_writes_the_cli_files(samarati_explorer):
    from microrelease.app.tabs.export.export_state import ExportState

    samarati_explorer.selected = samarati_explorer.lattice.index((1, 1))
    csv, report, _ = ExportState(explorer=samarati_explorer).files()
    table = pd.read_csv(__import__("io").BytesIO(csv), dtype=str)
    assert check_k_anonymity(table, ["Race", "ZIP"], 2).is_k_anonymous and len(table) == 9
    report = json.loads(report)
    assert all(c["passed"] for c in report["verification"]) and report["parameters"]["chosen_by"] == "node"


def test_teaching_find_vector_steps_highlight_probes(samarati_explorer):
    from microrelease.app.tabs.teaching.teaching_view import TeachingView

    t = TeachingView(state=TeachingState(explorer=samarati_explorer))
    trace = samarati_explorer.find_vector().trace
    assert samarati_explorer.probe == 0 and "try height <span id='fv-try'>1</span>" in t.probe_text.object
    t.step.value = len(trace)  # the slider drives the state (probes numbered from 1)
    assert samarati_explorer.probe == len(trace) - 1
    samarati_explorer.selected = samarati_explorer.lattice.index((0, 1))
    vt = t.vt.value
    assert list(vt["suppressed"]).count(True) == 2  # at [0, 1] two singleton outliers stay below k


def test_pairs_are_not_enough_example():
    table = pairs_check(PAIRS_EXAMPLE, ["sex", "age", "ZIP"])
    pairs = table[table["QIs"].str.count(",") == 1]
    assert len(pairs) == 3 and (pairs["smallest class"] == 2).all()
    assert table.iloc[-1]["QIs"] == "sex, age, ZIP" and table.iloc[-1]["smallest class"] == 1


def test_data_setup_roles_hierarchies_and_coverage(tmp_path):
    s = DataState()
    s.load_csv(b"name;age;zip\nann;34;94142\nbob;36;94139\ncy;71;94139\n", "people.csv")
    assert list(s.table.columns) == ["name", "age", "zip"] and "separator ';'" in s.message
    s.set_role("name", "identifier")
    s.set_role("age", "quasi-identifier")
    s.set_role("zip", "quasi-identifier")
    h = s.build("age", "intervals", "10,20")
    assert h.generalize(["34"], 1) == ["30-39"]
    s.build("zip", "masking", "1,2")
    assert s.missing("zip") == {}
    s.hierarchies = {**s.hierarchies, "zip": s.hierarchies["zip"].__class__("zip", (("94142", "*"),))}
    assert s.missing("zip") == {"94139": 2}
    with pytest.raises(DataError, match="uploads are limited"):
        s.load_csv(b"x" * (MAX_UPLOAD_BYTES + 1), "big.csv")
    with pytest.raises(DataError, match="unknown role"):
        s.set_role("age", "secret")


def test_data_panel_run_loads_into_the_explorer():
    app = Dashboard(sample="samarati")
    data = app.views["data"]
    assert data.sample.value == "samarati"
    data.sample.value = "toy"
    data._load_sample()
    assert app.explorer.dataset.quasi_identifiers == ("age", "gender", "zipcode")
    assert data.state.run_state == "loaded" and "Loaded 7 rows" in data.status.object


def test_notebook_views_for_a_dataset():
    ds = load_sample("samarati")
    lv, tv = lattice_view(ds, k=2), tradeoff_view(ds, k=2)
    assert lv.state.explorer.k_minimal_vectors() == [[0, 2], [1, 1]]
    assert len(tv.points().data) == int(query(tv.state.explorer.profile, 2, 0).satisfying.sum())


def test_loading_another_dataset_drops_weights_of_qis_it_lacks(samarati_explorer):
    e = samarati_explorer
    e.policy, e.weights = "weighted", {"ZIP": 3.0}
    e.load(*sample_with_profile("toy"))
    assert e.weights == {} and e.preferred is not None and e.dataset.quasi_identifiers == ("age", "gender", "zipcode")


def test_privacy_models_in_the_explorer_match_the_core_and_colour_model_failures():
    from microrelease.core import load_dataset, query
    from microrelease.core.data.samples import sample
    from microrelease.core.models.l_diversity import DistinctLDiversity
    from microrelease.core.models.model_profile import build_model_profile
    from microrelease.core.models.sensitive import sensitive_frequency

    adult = sample("adult")
    ds = load_dataset(adult.path, qi=["sex", "age", "race", "education"], hierarchy_dir=adult.folder)
    e = Explorer(ds, k=5, max_sup=100)
    assert "occupation" in e.param.sensitive_attribute.objects
    e.sensitive_attribute, e.l_kind, e.l = "occupation", "distinct", 4
    core = query(build_model_profile(ds, sensitive_frequency(ds, "occupation"), [DistinctLDiversity(4)]), 5, 100)
    assert e.k_minimal_vectors() == [list(n.vector) for n in core.k_minimal_nodes()]
    status = e.status()
    plain = query(e.plain_profile, 5, 100).satisfying
    assert ((status == 4) == (plain & ~core.satisfying)).all() and (status == 4).any()
    overview = graph.height_overview(e.lattice, e.answer.satisfying, e.answer.minimal, status == 4)
    assert overview.drop(columns="height").to_numpy().sum() == e.lattice.size
    assert overview["fails privacy model"].sum() == (status == 4).sum()
    e.selected = int(np.flatnonzero(status == 4)[0])
    assert len(e.explain()) > 0 and "distinct 4-diversity" in e.nodes_frame([e.selected])["models"].iloc[0]
    e.l = 99  # more than the 14 occupations: refused, k-anonymity alone answers
    assert "larger than the 14 distinct values" in e.message and e.profile is e.plain_profile


def test_tradeoff_axes_are_the_metrics_registry_and_the_front_follows_each_direction():
    from microrelease.app.tabs.tradeoff.tradeoff_view import TradeoffView
    from microrelease.core.lattice.metrics import METRICS

    dataset, profile = sample_with_profile("adult")
    state = TradeoffState(explorer=Explorer(dataset, profile, k=5, max_sup=301))
    view = TradeoffView(state=state)
    assert list(view.x.options.values()) == list(METRICS) == list(view.y.options.values())
    assert (state.x, state.y) == ("accuracy", "completeness") and state.title().startswith("Accuracy vs completeness")
    state.x, state.y = "discernibility", "smallest_class"  # lower is better, higher is better
    points = view.points().data
    assert len(points) == int(state.explorer.answer.satisfying.sum())
    m = state.explorer.answer.metrics
    ids = np.flatnonzero(state.explorer.answer.satisfying)
    pairs = set(zip(m["discernibility"][ids].tolist(), m["smallest_class"][ids].tolist(), strict=True))
    best = {(d, s) for d, s in pairs if not any(d2 <= d and s2 >= s and (d2, s2) != (d, s) for d2, s2 in pairs)}
    x, y = state.front()
    assert set(zip(x.tolist(), y.tolist(), strict=True)) == best and len(x) == len(best)


def test_data_run_on_a_worker_thread_can_be_cancelled():
    import threading

    explorer = Explorer(*sample_with_profile("samarati"), k=2)
    before = explorer.profile
    state = DataState(explorer=explorer, sample="adult")
    state.load_sample()
    handed = []
    done = threading.Event()
    state.hand_back = lambda fn: (handed.append(fn), done.set())
    reported = []
    state.param.watch(lambda ev: (reported.append(ev.new), state.cancel()), "progress")
    state.run()
    assert state.run_state == "running"
    assert done.wait(120)
    handed[0]()  # on the page's thread
    assert reported and state.run_state == "cancelled" and explorer.profile is before

    state.param.watch(lambda ev: None, "progress")
    state.cancel = lambda: None  # noqa: E731 - a run nobody cancels loads the data
    done.clear()
    state.run()
    assert done.wait(120)
    handed[-1]()
    assert state.run_state == "loaded" and explorer.dataset.n_rows == 30162 and state.progress == 1.0


def test_a_bug_in_the_data_run_shows_a_failure_and_logs_the_traceback(monkeypatch, caplog):
    import threading

    from microrelease.app.tabs.data import data_state

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the profile")

    monkeypatch.setattr(data_state, "build_profile", broken)
    explorer = Explorer(*sample_with_profile("samarati"), k=2)
    before = explorer.profile
    state = DataState(explorer=explorer, sample="toy")
    state.load_sample()
    handed, done = [], threading.Event()
    state.hand_back = lambda fn: (handed.append(fn), done.set())
    with caplog.at_level("ERROR", logger=data_state.__name__):
        state.run()
        assert done.wait(60), "the worker thread died without handing a result back"
    handed[0]()  # on the page's thread
    assert state.run_state == "failed" and explorer.profile is before
    assert state.error == ("an internal error stopped the run (RuntimeError); the server log has the details")
    [record] = [r for r in caplog.records if r.name == data_state.__name__]
    assert record.exc_info and record.exc_info[1].args == ("a bug in the profile",)


def test_the_data_view_shows_input_errors_and_lets_bugs_surface():
    from microrelease.app.tabs.data.data_view import DataView
    from microrelease.core import MicroreleaseError

    view = DataView(state=DataState(explorer=Explorer(*sample_with_profile("samarati"), k=2)))

    def refused():
        raise MicroreleaseError("bad input")

    view._guard(refused)
    assert view.status.object == "<span id='data-status'>⚠ bad input</span>"

    def bug():
        raise ValueError("a bug, not the user's input")

    with pytest.raises(ValueError, match="a bug"):
        view._guard(bug)


def test_a_hierarchy_upload_that_is_not_utf8_is_refused_with_its_attribute():
    from microrelease.core import HierarchyError

    state = DataState(explorer=Explorer(*sample_with_profile("samarati"), k=2))
    state.load_sample("toy")
    with pytest.raises(HierarchyError, match="not UTF-8 text"):
        state.load_hierarchy("age", b"\xff\xfe\x00bad")


def test_every_l_diversity_of_the_registry_reaches_the_core_with_the_values_chosen():
    from microrelease.app.explorer.models import L_DIVERSITY
    from microrelease.core import parse_criteria

    assert set(L_DIVERSITY) == {"distinct", "entropy", "recursive"}
    for kind, cls in L_DIVERSITY.items():
        e = Explorer()
        e.l_kind, e.l, e.c, e.t = kind, 2.5 if kind == "entropy" else 3, 4, 0.25
        l_model, t_model = parse_criteria(e.model_specs())
        assert type(l_model) is cls and l_model.l == e.l
        assert getattr(l_model, "c", e.c) == e.c and t_model.t == 0.25 and t_model.ground == e.ground


def test_a_wide_table_s_node_shows_its_qis_and_sensitive_columns_first_and_at_most_40_columns():
    from microrelease.app.explorer.details import PREVIEW_COLUMNS, NodeDetails
    from microrelease.core import build_profile, load_dataset

    toy = load_sample("toy")
    extra = pd.DataFrame({f"x{i}": [str(i)] * toy.n_rows for i in range(100)})
    table = pd.concat([extra, toy.table.reset_index(drop=True)], axis=1)  # the QIs come last
    qis = list(toy.quasi_identifiers)
    wide = load_dataset(table, qi=qis, hierarchies=dict(zip(qis, toy.hierarchies, strict=True)))
    e = Explorer(wide, build_profile(wide), k=2)
    details = NodeDetails(state=e)
    e.selected = int(e.answer.k_minimal_indices[0])
    shown_columns = list(details.table.value.columns)
    assert len(shown_columns) == PREVIEW_COLUMNS == 40
    assert shown_columns[:3] == list(toy.quasi_identifiers) and shown_columns[3:] == [f"x{i}" for i in range(37)]
    assert f"Showing 40 of {len(table.columns)} columns" in details.metrics.object
    assert len(details.suppressed.value.columns) <= 40
