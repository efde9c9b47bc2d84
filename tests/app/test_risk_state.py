"""The dashboard's risk controls and node risk, without a browser: the Explorer asks the core what the
command line asks, and a node's risk is that of its released rows, counted here."""

from __future__ import annotations

import numpy as np
import pytest

from microrelease.app.explorer.explorer import Explorer
from microrelease.app.explorer.sidebar import Sidebar
from microrelease.core import load_sample, query
from microrelease.core.risk.criteria import AverageRisk, PopulationUniqueness, RecordsAtRisk
from microrelease.core.risk.uniqueness import dankar


@pytest.fixture(scope="module")
def explorer():
    e = Explorer(dataset=load_sample("adult"))
    e.k, e.max_sup = 2, 300
    return e


def test_the_risk_boxes_ask_the_core_s_criteria_and_recolour_nodes_failing_only_them(explorer):
    e = explorer
    e.param.update(max_risk=0.01, max_at_risk=0.02, risk_threshold=0.25, max_uniqueness=0.0)
    criteria = (AverageRisk(0.01), RecordsAtRisk(0.25, 0.02))
    assert e.criteria() == criteria
    expected = query(e.profile, 2, 300, criteria)
    assert np.array_equal(e.answer.satisfying, expected.satisfying)
    assert np.array_equal(e.answer.minimal, expected.minimal)
    k_alone = query(e.profile, 2, 300).satisfying
    status = e.status()
    assert (status[k_alone & ~expected.satisfying] == 4).all() and (k_alone & ~expected.satisfying).any()
    e.param.update(max_risk=0.0, max_at_risk=1.0, max_uniqueness=0.001, sampling_fraction=0.05)
    assert e.criteria() == (PopulationUniqueness(0.001, 0.05),)
    e.param.update(max_uniqueness=0.0)
    assert e.criteria() == () and not (e.status() == 4).any()


def test_a_node_s_risk_is_that_of_its_released_rows(explorer):
    e = explorer
    e.param.update(risk_threshold=0.2, sampling_fraction=0.1)
    for i in (e.preferred, int(np.flatnonzero(e.answer.satisfying)[0])):
        released = e.release(i).released
        sizes = released.groupby(list(e.dataset.quasi_identifiers)).size().to_numpy()
        risk = e.risk(i)
        assert risk["highest"] == pytest.approx(1 / sizes.min())
        assert risk["average"] == pytest.approx(len(sizes) / sizes.sum())
        assert risk["records_at_risk"] == pytest.approx(sizes[sizes < 5].sum() / sizes.sum())
        assert "journalist_average" not in risk and "population_uniques" not in risk  # no limit set: not shown
        e.max_uniqueness = 0.5
        risk = e.risk(i)
        e.max_uniqueness = 0.0
        values, counts = np.unique(sizes, return_counts=True)
        est = dankar(values, counts, 0.1)
        assert risk["population_uniques"] == pytest.approx(est.share) if est.converged else risk["population_uniques"] is None


def test_a_risk_box_outside_its_bounds_is_refused_with_a_message(explorer):
    sidebar = Sidebar(state=explorer)
    box = sidebar.boxes["sampling_fraction"]
    box.value = 0.0
    assert sidebar.input_message.visible and "was not applied" in sidebar.input_message.object
    assert explorer.sampling_fraction == 0.1
