"""The sidebar's number boxes refuse what the question cannot take, say why, and keep the value in force."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from microrelease.app.main import Dashboard  # noqa: E402


@pytest.fixture
def dashboard():
    return Dashboard(sample="samarati")


@pytest.mark.parametrize(("box", "name", "bad", "good"), [
    ("k_input", "k", 0, 3), ("k_input", "k", 9999, 3), ("sup_rows", "max_sup", -1, 2),
    ("t_value", "t", 2.0, 0.3), ("l_value", "l", 0.5, 3.0), ("c_value", "c", 0.0, 2.0),
])
def test_a_value_out_of_range_is_refused_with_a_message_and_the_box_shows_the_value_in_force(dashboard, box, name,
                                                                                             bad, good):
    sidebar, explorer = dashboard.sidebar, dashboard.explorer
    before = getattr(explorer, name)
    getattr(sidebar, box).value = bad
    assert getattr(explorer, name) == before and getattr(sidebar, box).value == before
    assert sidebar.input_message.visible and f"stays {before:,}" in sidebar.input_message.object
    getattr(sidebar, box).value = good
    assert getattr(explorer, name) == good and not sidebar.input_message.visible


def test_a_negative_weight_is_refused(dashboard):
    sidebar, explorer = dashboard.sidebar, dashboard.explorer
    explorer.policy = "weighted"
    box = sidebar.weights.objects[0]
    box.value = -1
    assert explorer.weights == {} and "weight of Race" in sidebar.input_message.object
    box.value = 2
    assert explorer.weights == {"Race": 2}
