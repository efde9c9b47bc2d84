"""What the Lattice tab draws, without a browser: the capped frontier, path edges, the overview's bars,
the rings and the probed height, the hover's figures and rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pn = pytest.importorskip("panel")

from bokeh.document import Document  # noqa: E402

from microrelease.app.explorer.details import figure_text  # noqa: E402
from microrelease.app.explorer.explorer import STATUS, Explorer  # noqa: E402
from microrelease.app.main import sample_with_profile  # noqa: E402
from microrelease.app.style import integer_ticks  # noqa: E402
from microrelease.app.tabs.lattice import graph  # noqa: E402
from microrelease.app.tabs.lattice.figure import LatticeFigure  # noqa: E402
from microrelease.app.tabs.lattice.frontier import GROUPS, connectors, frontier, frontier_groups  # noqa: E402
from microrelease.app.tabs.lattice.lattice_state import BARS, LatticeState  # noqa: E402
from microrelease.app.tabs.lattice.lattice_view import FIGURES, LatticeView  # noqa: E402
from microrelease.core import Hierarchy, Lattice, load_dataset  # noqa: E402


@pytest.fixture(autouse=True)
def _reset_panel_state():
    yield
    pn.state.reset()


def monotone_question(lattice: Lattice, weights: tuple[int, ...], threshold: int) -> tuple[np.ndarray, np.ndarray]:
    """(satisfying, k-minimal) of the monotone predicate ``weights · vector >= threshold``."""
    satisfying = lattice.grid @ np.asarray(weights) >= threshold
    src, tgt = lattice.edges
    has_satisfying_below = np.zeros(lattice.size, dtype=bool)
    has_satisfying_below[tgt[satisfying[src]]] = True
    return satisfying, satisfying & ~has_satisfying_below


@pytest.fixture
def wide():
    """A lattice whose frontier (k-minimal nodes, spread over several heights) is far above a small cap."""
    lattice = Lattice((3, 3, 2, 2, 2), names=("a", "b", "c", "d", "e"))
    satisfying, minimal = monotone_question(lattice, (3, 2, 2, 1, 1), 9)
    return lattice, satisfying, minimal


def alone(g) -> list[int]:
    return [i for i in g if g.degree(i) == 0]


def test_a_capped_frontier_says_what_it_left_out_and_gives_each_k_minimal_node_a_neighbour(wide):
    lattice, satisfying, minimal = wide
    groups = frontier_groups(lattice, satisfying, minimal)
    assert len(groups["k-minimal"]) > 20 and sum(map(len, groups.values())) > 60
    focus = frontier(lattice, satisfying, minimal, cap=40)
    assert focus.truncated and len(focus.ids) == 40 == sum(focus.drawn.values())
    assert set(focus.ids) <= set(np.concatenate(list(groups.values())))
    assert focus.total == {g: len(groups[g]) for g in GROUPS}
    assert focus.left_out() == {g: focus.total[g] - focus.drawn[g] for g in GROUPS if focus.total[g] > focus.drawn[g]}
    g = graph.drawn_graph(lattice, focus.ids)
    drawn_minimal = [i for i in g if minimal[i]]
    assert drawn_minimal and all(any(not path for *_, path in g.edges(i, data="path")) or
                                 any(not path for *_, path in g.in_edges(i, data="path")) for i in drawn_minimal)
    assert not alone(g)
    heights = sorted({lattice.node_heights[i] for i in g})
    steps = {(lattice.node_heights[a], lattice.node_heights[b]) for a, b in g.edges}
    assert all((a, b) in steps for a, b in zip(heights, heights[1:], strict=False))


def test_an_uncapped_frontier_is_drawn_whole_and_first_nodes_come_first(wide):
    lattice, satisfying, minimal = wide
    groups = frontier_groups(lattice, satisfying, minimal)
    everything = np.concatenate(list(groups.values()))
    top = lattice.size - 1
    focus = frontier(lattice, satisfying, minimal, first=[top], cap=10_000)
    assert not focus.truncated and focus.left_out() == {}
    assert focus.ids[0] == top and set(focus.ids) == set(everything) | {top}


def test_connectors_cover_greedily_and_respect_the_budget():
    lattice = Lattice((1, 1, 1))  # the cube: targets (1,0,0) and (0,1,0) share (1,1,0) above and (0,0,0) below
    targets = np.array([lattice.index((1, 0, 0)), lattice.index((0, 1, 0))])
    candidates = np.array([lattice.index((0, 0, 1)), lattice.index((1, 1, 0))])
    assert connectors(lattice, targets, candidates, targets, budget=5) == [lattice.index((1, 1, 0))]
    assert connectors(lattice, targets, candidates, targets, budget=0) == []
    drawn = np.append(targets, lattice.index((0, 0, 0)))  # already joined by a drawn node below
    assert connectors(lattice, targets, candidates, drawn, budget=5) == []


def test_path_edges_join_a_lone_node_to_its_nearest_drawn_nodes_only():
    chain = Lattice((3,))
    assert graph.path_edges(chain, np.array([0, 3]), [0]).tolist() == [[0, 3]]
    square = Lattice((2, 2))
    bottom, middle, top = square.index((0, 0)), square.index((1, 1)), square.index((2, 2))
    g = graph.drawn_graph(square, np.array([bottom, middle, top]))
    assert sorted(g.edges(data="path")) == sorted([(bottom, middle, True), (middle, top, True)])  # not bottom -> top
    side = square.index((0, 1))
    g = graph.drawn_graph(square, np.array([bottom, side, top]))
    assert sorted(g.edges(data="path")) == [(bottom, side, False), (side, top, True)]


def test_overview_bars_stand_side_by_side_with_every_count():
    overview = pd.DataFrame({"height": [0, 1, 2], "fails": [1, 900, 0], "fails privacy model": [0, 0, 0],
                             "satisfies": [0, 40, 3], "k-minimal": [0, 1, 2]})
    bars = graph.overview_bars(overview, BARS)
    assert bars[["height", "status", "nodes"]].values.tolist() == [
        [0, "fails", 1], [1, "fails", 900], [1, "satisfies", 40], [1, "k-minimal", 1], [2, "satisfies", 3],
        [2, "k-minimal", 2]]
    for _, same in bars.groupby("height"):
        assert (same["x0"] >= same["height"] - 0.4 - 1e-9).all() and (same["x1"] <= same["height"] + 0.4 + 1e-9).all()
        assert (same["x0"].to_numpy()[1:] >= same["x1"].to_numpy()[:-1] - 1e-9).all()  # no overlap


@pytest.fixture
def samarati():
    return Explorer(*sample_with_profile("samarati"), k=2)


def test_rings_band_and_a_tap_that_does_not_move_the_drawing(samarati):
    e = samarati
    state = LatticeState(explorer=e)
    e.view = "focused"  # keyed on the answer and the preferred node, not on the selected one
    before = {i: state.drawn_graph().nodes[i]["pos"] for i in state.drawn_graph()}
    e.probe = 0
    probe = e.find_vector().trace[0]
    rings = state.rings()
    assert set(rings.loc[rings["ring"] == "tested", "vector"]) == {str(list(v)) for v in probe.tested}
    assert state.probe().tried == probe.tried
    tapped = int(e.lattice.index(probe.tested[0]))
    e.selected = tapped
    assert {i: state.drawn_graph().nodes[i]["pos"] for i in state.drawn_graph()} == before
    rings = state.rings()
    assert sorted(rings.loc[rings["vector"] == str(list(probe.tested[0])), "ring"]) == ["selected", "tested"]
    assert not {"selected", "data", "name", "tags"} & set(state.drawn_frame().columns)  # Bokeh CDS properties
    e.probe = None
    assert state.probe() is None and set(state.rings()["ring"]) == {"selected"}


def shown(view: LatticeView) -> tuple[LatticeFigure, pd.DataFrame]:
    """The view's (first) displayed lattice figure and the nodes it holds, as a frame."""
    fig = view.figures[0]
    return fig, pd.DataFrame(fig.points.data)


def test_points_are_coloured_by_status_alone_and_rings_are_separate_layers(samarati):
    e = samarati
    view = LatticeView(state=LatticeState(explorer=e))
    view.__panel__()
    e.selected, e.probe = 0, 0
    fig, points = shown(view)
    nodes = next(r for r in fig.figure.renderers if r.data_source is fig.points)
    assert nodes.glyph.fill_color.field == "status" and nodes.glyph.line_color == "white"  # no column on the outline
    rings = [r for r in fig.figure.renderers if r.data_source in fig.rings.values()]
    assert len(rings) == 2 and all(r.glyph.fill_alpha == 0 for r in rings)
    assert list(fig.rings["selected"].data["vector"]) == ["[0, 0]"]
    assert len(fig.rings["tested"].data["x"]) == len(e.find_vector().trace[0].tested)
    tried = e.find_vector().trace[0].tried
    assert (list(fig.band.data["y0"]), list(fig.band.data["y1"])) == ([tried - 0.5], [tried + 0.5])
    ticker = integer_ticks()
    assert ticker.min_interval == 1 and ticker.num_minor_ticks == 0


def test_the_figure_follows_the_question_and_a_tap_selects_the_row_tapped(samarati):
    e = samarati
    view = LatticeView(state=LatticeState(explorer=e))
    view.__panel__()
    for k, max_sup in ((2, 0), (3, 2), (9, 0), (1, 0)):
        e.param.update(k=k, max_sup=max_sup)
        _, points = shown(view)
        status = e.status()[points["node"].to_numpy()]
        assert points["status"].tolist() == [STATUS[s] for s in status], (k, max_sup)
        fig = view.figures[0].figure  # ranges sent with the data, around every node drawn
        assert fig.x_range.start < points["x"].min() <= points["x"].max() < fig.x_range.end
        assert fig.y_range.start < points["y"].min() <= points["y"].max() < fig.y_range.end
        bars = pd.DataFrame(view.bar_sources[0].data)
        a = e.answer
        totals = {"fails": int((~a.satisfying).sum()), "satisfies": int((a.satisfying & ~a.minimal).sum()),
                  "k-minimal": int(a.minimal.sum())}
        assert bars.groupby("status")["top"].sum().to_dict() == {s: n for s, n in totals.items() if n}
    fig, points = shown(view)
    node = int(points.loc[points["vector"] == "[1, 1]", "node"].iloc[0])
    fig.tapped.data = {"node": [node], "at": [1]}  # what a tap in the page sends: the node it shows there
    assert e.selected == e.lattice.index((1, 1))
    assert list(fig.rings["selected"].data["vector"]) == ["[1, 1]"]


def test_a_node_selected_outside_the_focused_drawing_is_drawn_and_large_drawings_use_small_nodes():
    dataset, profile = sample_with_profile("adult")
    e = Explorer(dataset, profile, k=5, max_sup=301)
    view = LatticeView(state=LatticeState(explorer=e))
    view.__panel__()
    _, points = shown(view)
    outside = int(np.setdiff1d(np.arange(e.lattice.size), points["node"])[0])
    e.selected = outside  # from the trade-off plot, say
    fig, points = shown(view)
    assert outside in set(points["node"]) and list(fig.rings["selected"].data["x"]) == list(
        points.loc[points["node"] == outside, "x"])
    sizes = {r.glyph.size for r in fig.figure.renderers if r.data_source is fig.points}
    assert sizes == {13}
    e.view = "full"  # 6,480 nodes: dots, not discs
    sizes = {r.glyph.size for r in fig.figure.renderers if r.data_source is fig.points}
    assert sizes == {5} and len(shown(view)[1]) == e.lattice.size


def test_a_copy_out_of_view_is_not_kept_current_and_is_redrawn_when_back(samarati):
    e = samarati
    view = LatticeView(state=LatticeState(explorer=e))
    view.__panel__()
    view.live = False
    e.k = 3
    fig, points = shown(view)
    assert points["status"].tolist() != [STATUS[s] for s in e.status()[points["node"].to_numpy()]]
    view.live = True
    fig, points = shown(view)
    assert points["status"].tolist() == [STATUS[s] for s in e.status()[points["node"].to_numpy()]]


def test_a_notebook_display_gets_each_change_pushed(samarati):
    """Shown in a notebook (a comm, no server session), a change of the question is sent to the page."""
    from panel.io.model import add_to_doc
    from pyviz_comms import Comm

    sent = []

    class Recording(Comm):
        def send(self, data=None, metadata=None, buffers=None):
            sent.append(data)

    view = LatticeView(state=LatticeState(explorer=samarati))
    doc, comm = Document(), Recording()
    comm._comm = True  # an open comm (it sends at once)
    root = view.__panel__().get_root(doc, comm=comm)
    add_to_doc(root, doc, True)  # as a notebook's display does
    samarati.k = 3
    assert any(b'"status"' in (m if isinstance(m, bytes) else str(m).encode()) for m in sent), sent[:3]
    # the output cleared (Panel cleans its models up): that display is no longer fed
    view.__panel__()  # displayed again elsewhere
    panel_root = next(iter(pn.state._views.values()))[0]
    panel_root._cleanup(root)
    samarati.k = 2
    assert len(view.figures) == 1


def test_hover_writes_the_figures_as_the_details_do(samarati):
    e = samarati
    view = LatticeView(state=LatticeState(explorer=e))
    for _, row in view.points().iterrows():
        figures = e.figures(int(row["node"]))
        assert all(row[f"{name}_text"] == figure_text(figures[name]) for name in FIGURES)


def test_hover_has_the_failing_models_row_only_while_models_are_applied():
    table = pd.DataFrame({"zip": ["1", "1", "2", "2", "1", "2"], "disease": ["x", "x", "y", "z", "x", "z"]})
    ds = load_dataset(table, qi=["zip"], hierarchies={"zip": Hierarchy("zip", (("1", "*"), ("2", "*")))})
    e = Explorer(ds, k=2)
    view = LatticeView(state=LatticeState(explorer=e))
    view.__panel__()

    def rows() -> list[str]:
        return [label for label, _ in view.figures[0].hover.tooltips]

    assert "failing privacy models" not in rows() and "levels" in rows()
    e.sensitive_attribute, e.l_kind, e.l = "disease", "distinct", 2
    assert e.applied_models and "failing privacy models" in rows()
    models = shown(view)[1].set_index("vector")["models"]
    assert "distinct 2-diversity: 3 rows" in models["[0]"] and models["[1]"] == "none"


def test_edges_among_the_drawn_nodes_are_the_same_from_their_successors(monkeypatch):
    """A large lattice's drawn edges come from the drawn nodes' successors, not a scan of every edge."""
    from microrelease.app.tabs.lattice import graph as drawing
    from microrelease.core.lattice.distance_vectors import Lattice

    lattice = Lattice((4, 3, 2, 2, 3, 1, 2, 2))
    ids = np.sort(np.random.default_rng(1).choice(lattice.size, 300, replace=False))
    scanned = set(zip(*(side.tolist() for side in drawing.edges_among(lattice, ids)), strict=True))
    monkeypatch.setattr(drawing, "EDGE_SCAN", 0)
    stepped = set(zip(*(side.tolist() for side in drawing.edges_among(lattice, ids)), strict=True))
    assert stepped == scanned and scanned
