"""The Compare tab's state without a browser: pins, and each pinned node's figures, risk, class sizes
and QI distributions, checked against the node's generalized table (core ``generalize``) recounted
here with pandas by the definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

pn = pytest.importorskip("panel")

from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.main import Dashboard, sample_with_profile  # noqa: E402
from microrelease.app.tabs.compare.compare_state import (  # noqa: E402
    INPUT,
    MAX_PINS,
    MODELS_REASON,
    RISK,
    SUPPRESSED,
    CompareState,
    add_pin,
    capped,
)
from microrelease.app.tabs.compare.compare_view import CompareView  # noqa: E402
from microrelease.core import Hierarchy, generalize, load_dataset, load_sample  # noqa: E402
from microrelease.core.lattice.quality import QUALITY_MODELS  # noqa: E402


@pytest.fixture(autouse=True)
def _reset_panel_state():
    yield
    pn.state.reset()


def compare(sample: str, **question) -> CompareState:
    return CompareState(explorer=Explorer(*sample_with_profile(sample), **question))


def released(e: Explorer, node: int):
    """The node's generalized table as the export writes it (minimal required suppression, models included)."""
    return generalize(e.dataset, e.lattice.node(node), e.k, sensitive_frequency=e.applied_frequency,
                      models=e.applied_models)


def column(state: CompareState, node: int) -> dict[str, object]:
    """The pinned ``node``'s column of the figures table, by figure label."""
    t = state.table()
    return dict(zip(t["figure"], t[state.vector(node)], strict=True))


# --- pins -----------------------------------------------------------------------------------------------

@given(st.lists(st.integers(0, 6), max_size=20))
def test_pins_keep_the_last_distinct_nodes_pinned_oldest_first(nodes):
    pins: list[int] = []
    for node in nodes:
        pins = add_pin(pins, node)
    expected: list[int] = []  # the definition: a new node goes last, a fourth pushes out the oldest
    for node in nodes:
        if node not in expected:
            expected = (expected + [node])[1:] if len(expected) == MAX_PINS else expected + [node]
    assert pins == expected and len(set(pins)) == len(pins) <= MAX_PINS


def test_the_button_pins_the_selected_node_else_the_preferred_one_and_a_new_table_clears_the_pins():
    s = compare("samarati", k=2)
    e = s.explorer
    s.pin()
    assert s.pins == [e.preferred]
    for node in (0, 1, 3, 4):  # a fourth pin replaces the oldest
        e.selected = node
        s.pin()
    assert s.pins == [1, 3, 4]
    s.unpin(3)
    assert s.pins == [1, 4]
    e.load(load_sample("toy"))
    assert s.pins == [] and s.candidate() == e.preferred
    # a QI that cannot be generalized (height 0) and a lone "y": nothing satisfies k = 2, nothing to pin
    e.load(load_dataset(pd.DataFrame({"a": ["x", "y", "x"]}), qi=["a"], hierarchies={"a": Hierarchy("a", (("x",), ("y",)))}))
    e.k = 2
    assert e.preferred is None and s.candidate() is None
    s.pin()
    assert s.pins == []


def test_the_view_never_draws_the_old_table_s_nodes():
    """Loading a table clears the pins before the view redraws (node 6000 of adult's lattice ...)."""
    s = compare("adult", k=5, max_sup=300)
    view = CompareView(state=s)
    s.pins = [6000, 6479]
    assert len(view.columns.objects) == 2
    s.explorer.load(*sample_with_profile("samarati"))  # ... nor in samarati's lattice of 6 nodes
    assert s.pins == [] and view.columns.objects == [] and not view.table.visible


# --- figures ----------------------------------------------------------------------------------------------

def expected_figures(e: Explorer, node: int) -> dict[str, float]:
    """Metrics, risk and quality of ``node`` by their definitions, from its generalized table."""
    gt, n = released(e, node), e.dataset.n_rows
    vector, hierarchies = e.lattice.node(node), e.dataset.hierarchies
    sizes = gt.classes["size"].to_numpy()  # released classes
    s = n - int(sizes.sum())
    assert s == len(gt.suppressed_rows)
    ratio = [d / h.height if h.height else 0.0 for d, h in zip(vector, hierarchies, strict=True)]
    out = {
        "Accuracy": 1 - np.mean(ratio), "Completeness": (n - s) / n, "Suppressed rows": s,
        "Distinct combinations": len(sizes), "Relative distance": sum(ratio),
        "Discernibility": float((sizes ** 2).sum() + s * n),
        "Average class size": (n - s) / len(sizes) if len(sizes) else 0.0,
        "Smallest class": int(sizes.min()) if len(sizes) else 0,
        "Highest re-identification risk": 1 / sizes.min() if len(sizes) else 0.0,
        RISK["highest"][0]: 1 / sizes.min() if len(sizes) else 0.0,
        RISK["average"][0]: len(sizes) / (n - s) if len(sizes) else 0.0,
        RISK["records_at_risk"][0]: sizes[1 / sizes > 0.2].sum() / (n - s) if len(sizes) else 0.0,
        "Precision (ARX)": np.mean([((n - s) * r + s) / n for r in ratio]),
        "Height (ARX)": sum(vector),
        "Discernibility (DM)": float((sizes ** 2).sum() + s * n),
        "AECS": n / max(len(sizes) + (s > 0), 1),
    }
    # every class, suppressed ones included (a model's failing classes too)
    out["Discernibility DM* (monotone)"] = float((gt.class_sizes.astype(float) ** 2).sum())
    if e.profile.quality is not None:  # ARX's Loss: share of each QI's ground domain under a released value
        per_qi = []
        for qi, h, d in zip(e.dataset.quasi_identifiers, hierarchies, vector, strict=True):
            under = pd.Series([row[d] for row in h.rows]).value_counts()
            mass = (gt.released[qi].map(under).astype(float) / len(h.rows)).sum()  # 0 when nothing is released
            floor = n / len(h.rows)
            per_qi.append((mass + s - floor) / (n - floor))
        out["Loss (ARX)"] = float(np.prod(1 + np.array(per_qi)) ** (1 / len(per_qi)) - 1)
    return out


def check_every_node(s: CompareState) -> int:
    """Pin the lattice's nodes three at a time and check each column; returns the nodes checked."""
    e = s.explorer
    for start in range(0, e.lattice.size, MAX_PINS):
        s.pins = list(range(start, min(start + MAX_PINS, e.lattice.size)))
        for node in s.pins:
            got, want = column(s, node), expected_figures(e, node)
            for label, value in want.items():
                assert got[label] == pytest.approx(value, rel=1e-9, abs=1e-12), (node, label)
            assert got[s.satisfies_label()] == (want["Suppressed rows"] <= e.max_sup)  # no risk model asked for
            assert got["k-minimal"] == bool(e.answer.minimal[node])
            assert got[f"preferred ({e.policy})"] == (node == e.preferred)
            assert got["levels"] == e.vector_text(node)
    return e.lattice.size


@pytest.mark.parametrize(("sample", "k", "max_sup", "policy"),
                         [("samarati", 2, 0, "min-relative"), ("samarati", 3, 2, "loss"), ("toy", 2, 1, "loss"),
                          ("toy", 3, 0, "min-suppression")])
def test_every_figure_of_every_node_is_its_definition_on_the_generalized_table(sample, k, max_sup, policy):
    s = compare(sample, k=k, max_sup=max_sup, policy=policy)
    assert (s.explorer.profile.quality is not None) == (policy == "loss")
    assert check_every_node(s) == s.explorer.lattice.size
    shown = set(s.table()["figure"])
    assert ("Loss (ARX)" in shown) == (policy == "loss") and "Discernibility DM* (monotone)" in shown
    assert ("Loss (ARX)" in s.quality_note()) == (policy != "loss")


def test_under_a_privacy_model_the_figures_are_those_of_the_release_and_the_quality_profile_s_are_said_missing():
    s = compare("adult", k=5, max_sup=300)
    e = s.explorer
    e.sensitive_attribute, e.t = "salary-class", 0.2  # built here and now (no page)
    assert e.applied_models
    failing = np.flatnonzero(e.status() == 4)  # nodes that only the model rejects
    s.pins = [int(failing[0]), int(e.preferred), int(failing[-1])]
    for node in s.pins:
        got, want = column(s, node), expected_figures(e, node)
        for label, value in want.items():
            assert got[label] == pytest.approx(value, rel=1e-9, abs=1e-12), (node, label)
        assert got["rows failing a privacy model"] == (e.failing_models(node) or "none")
    shown = set(s.table()["figure"])
    profile_read = [n for n, q in QUALITY_MODELS.items() if q.needs_mass]  # what the model profile lacks until asked
    assert profile_read and not {QUALITY_MODELS[n].label for n in profile_read} & shown
    assert {QUALITY_MODELS[n].label for n in ("precision", "height", "discernibility", "dm-star", "aecs")} <= shown
    assert s.quality_note() == f"{' and '.join(QUALITY_MODELS[n].label for n in profile_read)} not shown: {MODELS_REASON}."
    check_distributions(s)


def test_with_a_risk_model_a_node_satisfies_when_the_answer_says_so_and_the_row_names_the_model():
    s = compare("adult", k=2, max_sup=300)
    e = s.explorer
    if "max_risk" not in e.param:  # the risk models of the sidebar are the Explorer's, when it has them
        pytest.skip("this Explorer has no risk-based privacy models")
    e.max_risk = 0.02
    assert e.answer.criteria
    label = s.satisfies_label()
    assert label.startswith("satisfies k = 2 within MaxSup = 300, ") and e.answer.criteria[0].describe() in label
    failing = np.flatnonzero(e.status() == 4)  # k and MaxSup would do: the risk model rejects them
    s.pins = [int(failing[0]), int(e.preferred)]
    got = dict(zip(s.table()["figure"], zip(*(s.table()[s.vector(i)] for i in s.pins), strict=True), strict=True))
    assert got[label] == (False, True)
    assert got[RISK["average"][0]][1] <= 0.02 < got[RISK["average"][0]][0]


# --- class sizes and distributions --------------------------------------------------------------------------

def test_the_class_size_histogram_is_the_generalized_table_s():
    s = compare("toy", k=2)
    e = s.explorer
    for node in range(e.lattice.size):
        sizes, counts, kept = s.histogram(node)
        gt = released(e, node)
        want_sizes, want_counts = np.unique(gt.class_sizes, return_counts=True)
        np.testing.assert_array_equal(sizes, want_sizes)
        np.testing.assert_array_equal(counts, want_counts)
        released_sizes = gt.classes["size"].value_counts().sort_index()
        np.testing.assert_array_equal(sizes[kept], released_sizes.index)
        np.testing.assert_array_equal(counts[kept], released_sizes.to_numpy())


def check_distributions(s: CompareState) -> None:
    """Each QI's distribution frame (uncapped) against pandas' value counts of the input and of each
    pinned node's released rows."""
    e = s.explorer
    frames = s.distributions(max_bars=None)
    assert list(frames) == list(e.dataset.quasi_identifiers)
    for qi, frame in frames.items():
        assert list(dict.fromkeys(frame["release"])) == [INPUT, *(s.vector(i) for i in s.pins)]
        np.testing.assert_allclose(frame["share"], frame["rows"] / e.dataset.n_rows)
        by_release = {r: dict(zip(g["value"], g["rows"], strict=True)) for r, g in frame.groupby("release", sort=False)}
        assert by_release[INPUT] == e.dataset.table[qi].value_counts().to_dict()
        for node in s.pins:
            gt = released(e, node)
            want = gt.released[qi].astype(str).value_counts().to_dict()
            if len(gt.suppressed_rows):
                want[SUPPRESSED] = len(gt.suppressed_rows)
            assert by_release[s.vector(node)] == want, (qi, node)


@pytest.mark.parametrize(("sample", "k"), [("samarati", 2), ("samarati", 3), ("toy", 2), ("toy", 4)])
def test_each_qi_s_distribution_before_and_after_is_the_input_s_and_the_release_s(sample, k):
    s = compare(sample, k=k)
    e = s.explorer
    for start in range(0, e.lattice.size, MAX_PINS):
        s.pins = list(range(start, min(start + MAX_PINS, e.lattice.size)))
        check_distributions(s)


def test_adult_s_distributions_are_the_release_s_and_capped_for_the_page():
    s = compare("adult", k=5, max_sup=300)
    e = s.explorer
    s.pins = [0, int(e.preferred), e.lattice.size // 2]
    check_distributions(s)
    full, shown = s.distributions(max_bars=None), s.distributions()
    for qi in e.dataset.quasi_identifiers:
        for release, group in shown[qi].groupby("release", sort=False):
            whole = full[qi][full[qi]["release"] == release]
            assert len(group) <= 24 and group["rows"].sum() == whole["rows"].sum() == e.dataset.n_rows
            if len(whole) > 24:  # e.g. age's 74 ground values in the input
                assert group["value"].iloc[-1 if release == INPUT else -2].endswith("other values)")


@given(st.lists(st.integers(1, 50), min_size=1, max_size=40), st.integers(2, 10))
def test_capping_keeps_the_largest_values_in_order_and_sums_the_rest(rows, max_bars):
    counts = pd.Series(rows, index=[f"v{i}" for i in range(len(rows))])
    out = capped(counts, max_bars)
    assert len(out) <= max_bars and out.sum() == counts.sum()
    if len(counts) <= max_bars:
        pd.testing.assert_series_equal(out, counts)
        return
    kept = out.iloc[:-1]
    assert out.index[-1] == f"({len(counts) - len(kept)} other values)"
    assert list(kept.index) == [v for v in counts.index if v in kept.index]  # in their order
    assert kept.min() >= counts.drop(kept.index).max()  # none left out is larger than one kept


def test_the_dashboard_lists_the_tab_and_its_line_says_what_the_button_pins():
    d = Dashboard(sample="samarati")
    d.tab = "compare"
    line = d.step_lines["compare"].object
    assert "the preferred node (min-relative) [0, 2]" in line and "k = 2 within MaxSup = 0" in line
    d.explorer.selected = 1
    view = d.views["compare"]
    assert view.pin_button.label == "Pin the selected node [0, 1]"
    view.pin_button.clicks += 1
    assert view.state.pins == [1] and len(view.columns.objects) == 1 and len(view.bars.objects) == 2


# --- one path: the Explorer's figures -----------------------------------------------------------------

def test_a_pinned_node_s_quality_and_risk_are_the_explorer_s_for_that_node():
    s = compare("samarati", k=3, max_sup=2, policy="loss")
    e = s.explorer
    s.pins = [0, int(e.preferred), e.lattice.size - 1]
    for node in s.pins:
        got = column(s, node)
        quality = e.quality(node)
        assert quality and {QUALITY_MODELS[n].label: v for n, v in quality.items()} == {
            QUALITY_MODELS[n].label: got[QUALITY_MODELS[n].label] for n in quality}
        risk = e.risk(node)
        assert {label: risk[name] for name, (label, _) in RISK.items()} == {label: got[label] for label, _ in RISK.values()}
    # the threshold is the Explorer's: Compare follows it like the node details do
    e.risk_threshold = 0.5
    for node in s.pins:
        assert column(s, node)[RISK["records_at_risk"][0]] == e.risk(node)["records_at_risk"]
    assert f"{RISK['records_at_risk'][1].format(threshold=0.5)}" in set(s.table()["meaning"])


def test_compare_does_not_compute_the_figures_itself(monkeypatch):
    import dataclasses

    import microrelease.app.explorer.explorer as explorer_module
    import microrelease.app.tabs.compare.compare_state as compare_module
    from microrelease.core.lattice import quality as quality_module

    assert not hasattr(compare_module, "node_risk")  # no copy of the core computation to call
    s = compare("samarati", k=2, max_sup=2, policy="loss")
    e = s.explorer
    calls = {"risk": 0, "quality": 0}
    real_risk = explorer_module.node_risk

    def counted_risk(*args, **kwargs):
        calls["risk"] += 1
        return {name: values + 1000.0 for name, values in real_risk(*args, **kwargs).items()}  # marked

    def counted(model):
        def score(profile, k):
            calls["quality"] += 1
            return model.score(profile, k) + 1000.0  # marked
        return dataclasses.replace(model, score=score)

    monkeypatch.setattr(explorer_module, "node_risk", counted_risk)
    for name, model in list(QUALITY_MODELS.items()):  # the registry both modules hold: the core's one
        monkeypatch.setitem(QUALITY_MODELS, name, counted(model))
    assert quality_module.QUALITY_MODELS is QUALITY_MODELS is explorer_module.QUALITY_MODELS
    e.k = 3  # a new question: the Explorer's figures are computed again, through the patched core
    s.pins = [0, int(e.preferred), e.lattice.size - 1]
    calls.update(risk=0, quality=0)  # answering the question (the loss policy) scored it: what follows is the tab's
    s.table(), s.quality_note(), s.table()
    assert calls["risk"] == 1  # once for the lattice, by the Explorer, whatever the pins and the redraws
    n_models = calls["quality"]
    assert len(e.quality_scores()) <= n_models <= len(QUALITY_MODELS)  # each model scored once, for every node
    for node in s.pins:  # what Compare shows is what the patched core gave the Explorer
        got = column(s, node)
        assert all(got[label] >= 1000.0 for label, _ in RISK.values())
        assert got[QUALITY_MODELS["precision"].label] >= 1000.0
    assert calls == {"risk": 1, "quality": n_models}
