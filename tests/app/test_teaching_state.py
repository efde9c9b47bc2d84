"""The Teaching tab's state and view without a browser (Find_vector steps, VT, presentation mode),
and the node details' histogram and failing-classes table."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

pn = pytest.importorskip("panel")
hv = pytest.importorskip("holoviews")

from microrelease.app.explorer.details import NodeDetails, failing_classes  # noqa: E402
from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.main import sample_with_profile  # noqa: E402
from microrelease.app.tabs.lattice.lattice_view import LatticeView  # noqa: E402
from microrelease.app.tabs.teaching import teaching_state as teaching  # noqa: E402
from microrelease.app.tabs.teaching.teaching_state import VT_FIRST, TeachingState  # noqa: E402
from microrelease.app.tabs.teaching.teaching_view import PRESENTING, TeachingView  # noqa: E402
from microrelease.core import Hierarchy, load_dataset  # noqa: E402

PLAIN_VECTOR = re.compile(r"^\(\d+, \d+\)$")


@pytest.fixture(autouse=True)
def _reset_panel_state():
    yield
    pn.state.reset()


@pytest.fixture
def explorer():
    return Explorer(*sample_with_profile("samarati"), k=2)


def test_vt_cells_are_plain_integer_vectors_after_the_suppression_columns(explorer):
    explorer.selected = explorer.lattice.index((0, 1))
    frame = TeachingState(explorer=explorer).vt_frame()
    assert list(frame.columns[:4]) == VT_FIRST  # C_x and "suppressed" before the wide part of the matrix
    tuples = frame.columns[4:]
    assert len(tuples) == explorer.dataset.frequency.n_distinct
    cells = frame[tuples].to_numpy().ravel()
    assert all(PLAIN_VECTOR.match(c) for c in cells), [c for c in cells if not PLAIN_VECTOR.match(c)][:3]
    assert "(0, 2)" in cells and not any("np." in c for c in cells)
    assert all(type(v) is int for v in frame["C_x at node"]) and all(type(v) is bool for v in frame["suppressed"])
    assert frame["suppressed"].sum() == 2  # at [0, 1] two singleton outliers stay below k


def test_vt_is_left_out_above_the_limit_and_the_view_hides_its_table(explorer, monkeypatch):
    monkeypatch.setattr(teaching, "VT_LIMIT", explorer.dataset.frequency.n_distinct - 1)
    view = TeachingView(state=TeachingState(explorer=explorer))
    assert view.state.vt_frame() is None
    assert not view.vt.visible and "distinct combinations" in view.vt_text.object


def test_vt_titles_from_data_are_escaped():
    table = pd.DataFrame({"a": ["<b>x</b>", "y", "y"]})
    ds = load_dataset(table, qi=["a"], hierarchies={"a": Hierarchy("a", (("<b>x</b>", "*"), ("y", "*")))})
    view = TeachingView(state=TeachingState(explorer=Explorer(ds, k=2)))
    titles = view.vt.titles
    assert "(&lt;b&gt;x&lt;/b&gt;)" in titles.values() and not any("<b>" in t for t in titles.values())
    assert all(re.fullmatch(r"t\d+", f) for f in view.vt.value.columns if f not in VT_FIRST)


def test_probes_are_numbered_from_one(explorer):
    s = TeachingState(explorer=explorer)
    n = s.steps()
    assert n == 2 and s.step == 1 and s.param.step.bounds == (1, 2)
    assert explorer.probe == 0 and s.probe()[1] == 0
    s.step = 2
    assert explorer.probe == 1 and s.probe()[1] == 1
    view = TeachingView(state=s)
    assert view.step.value == 2 and "Probe <span id='fv-step'>2</span> of <span id='fv-steps'>2</span>" in (
        view.probe_text.object)


def test_step_buttons_stay_within_the_probes(explorer):
    s = TeachingState(explorer=explorer)
    view = TeachingView(state=s)
    assert view.back.disabled and not view.forward.disabled
    view.back.clicks += 1
    assert s.step == 1
    view.forward.clicks += 1
    assert s.step == 2 and explorer.probe == 1 and view.forward.disabled and not view.back.disabled
    assert "try height <span id='fv-try'>2</span>" in view.probe_text.object
    view.forward.clicks += 1
    assert s.step == 2
    view.again.clicks += 1
    assert s.step == 1 and explorer.probe == 0 and "Probe <span id='fv-step'>1</span>" in view.probe_text.object


def test_each_probe_says_its_bounds_and_outcome_in_words(explorer):
    view = TeachingView(state=TeachingState(explorer=explorer))
    first = view.probe_text.object
    assert "between low = 0 and high = 3" in first and "None of them satisfies" in first
    assert "low becomes 2" in first
    view.state.next_step()
    second = view.probe_text.object
    assert "[0, 2] satisfies" in second and "high becomes 2" in second and "Race: " in second
    explorer.k = 9  # only the top groups all 9 rows: the search ends on the top, which it then tests
    top = view.probe_text.object  # a new answer starts again at probe 1
    assert "Probe <span id='fv-step'>1</span>" in top
    view.state.step = view.state.steps()
    assert "the bounds have met at the top" in view.probe_text.object


def test_presentation_mode_loads_samarati_and_shows_the_lattice():
    e = Explorer(*sample_with_profile("toy"), k=3)
    view = TeachingView(state=TeachingState(explorer=e))
    view.presentation.value = True
    assert view.lattice.visible and isinstance(view.lattice_view, LatticeView)
    assert all(PRESENTING in part.css_classes for part in view._parts)
    assert view.vt.height > 260  # a new size: Tabulator measures its columns in the larger type
    view.example.clicks += 1
    assert e.dataset.quasi_identifiers == ("Race", "ZIP") and (e.k, e.max_sup) == (2, 0)
    assert view.state.step == 1 and e.probe == 0
    assert "Probe <span id='fv-step'>1</span> of <span id='fv-steps'>2</span>" in view.probe_text.object
    view.presentation.value = False
    assert not view.lattice.visible and view.vt.height == 260
    assert not any(PRESENTING in part.css_classes for part in view._parts)


# --- node details ---------------------------------------------------------------------------------
def test_histogram_is_a_figure_replaced_per_node_not_a_dynamic_map(explorer):
    details = NodeDetails(state=explorer)
    assert not details.histogram.visible
    for vector in [(1, 1), (0, 2)]:
        explorer.selected = explorer.lattice.index(vector)
        plot = details.histogram.object
        assert details.histogram.visible and isinstance(plot, hv.Spikes)  # never a DynamicMap (see details.py)
        sizes, counts, _ = explorer.class_sizes(explorer.selected)
        assert np.array_equal(plot.dimension_values("class size"), sizes)
        assert np.array_equal(plot.dimension_values("classes"), counts)
    explorer.selected = None
    assert not details.histogram.visible


def test_failing_classes_join_the_qi_values_into_one_column():
    failing = pd.DataFrame({"sex": ["Male"], "age": ["37"], "size": [381], "0.2-closeness": [0.25],
                            "fails": ["0.2-closeness"], "distribution": ["<=50K: 191, >50K: 190"]})
    shown = failing_classes(failing, ["sex", "age"])
    assert list(shown.columns) == ["class", "size", "0.2-closeness", "fails", "distribution"]
    assert shown.loc[0, "class"] == "Male · 37"


def test_table_titles_from_column_names_are_escaped():
    table = pd.DataFrame({"a": ["x", "x", "y"], "<img src=x onerror=alert(1)>": ["1", "2", "3"]})
    ds = load_dataset(table, qi=["a"], hierarchies={"a": Hierarchy("a", (("x", "*"), ("y", "*")))})
    e = Explorer(ds, k=2)
    details = NodeDetails(state=e)
    e.selected = e.lattice.index((0,))
    for shown_table in (details.table, details.suppressed):
        assert "<img" not in "".join(shown_table.titles.values())
    assert details.table.titles["<img src=x onerror=alert(1)>"] == "&lt;img src=x onerror=alert(1)&gt;"


def test_the_pairs_check_of_a_release_with_no_rows_says_0_instead_of_failing():
    from microrelease.app.tabs.teaching.teaching_state import pairs_check

    empty = pd.DataFrame({"age": pd.Series([], dtype=str), "zip": pd.Series([], dtype=str),
                          "sex": pd.Series([], dtype=str)})
    assert pairs_check(empty, ["age", "zip", "sex"])["smallest class"].tolist() == [0, 0, 0, 0]


def test_tapping_a_node_that_suppresses_every_row_keeps_every_view_on_that_node():
    """Found by a review: an empty release broke the Teaching tab's watcher, and the Export tab then
    described another node than the details."""
    from microrelease.app.main import Dashboard
    from microrelease.core import Dataset, intervals
    from microrelease.core.data.roles import Schema

    table = pd.DataFrame({"name": ["ann", "bob", "cy", "dee"], "age": ["34", "36", "71", "45"]})
    dataset = Dataset(table, Schema(("age",), ("name",), ()), (intervals("age", list(table["age"]), [10, 20]),))
    app = Dashboard(dataset=dataset)
    app.views["teaching"]  # noqa: B018 - built, as when the tab has been opened
    e = app.explorer
    e.k, e.max_sup = 2, 4
    bottom = e.lattice.index((0,))
    e.selected = bottom  # every row is alone at level 0: all suppressed
    assert e.release(bottom).released.empty
    assert app.views["teaching"].pairs_live.value["smallest class"].tolist() == [0]
    assert app.views["export"].state.node() == bottom


def test_the_class_size_histogram_ticks_whole_numbers_only():
    import holoviews as hv

    from microrelease.app.explorer.details import class_size_plot

    figure = hv.render(class_size_plot(np.array([3, 6]), np.array([2, 1]), np.array([True, True])))
    for axis in (figure.xaxis[0], figure.yaxis[0]):
        assert axis.ticker.min_interval == 1 and axis.ticker.num_minor_ticks == 0
