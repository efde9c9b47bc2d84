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
    ("t", "t", 2.0, 0.3), ("l", "l", 0.5, 3.0), ("c", "c", 0.0, 2.0), ("k_map", "k_map", -1, 1),
])
def test_a_value_out_of_range_is_refused_with_a_message_and_the_box_shows_the_value_in_force(dashboard, box, name,
                                                                                             bad, good):
    sidebar, explorer = dashboard.sidebar, dashboard.explorer
    widget = getattr(sidebar, box, None) or sidebar.boxes[box]  # the question's own, or a criterion's generated box
    before = getattr(explorer, name)
    widget.value = bad
    assert getattr(explorer, name) == before and widget.value == before
    assert sidebar.input_message.visible and f"stays {before:,}" in sidebar.input_message.object
    widget.value = good
    assert getattr(explorer, name) == good and not sidebar.input_message.visible


def test_a_negative_weight_is_refused(dashboard):
    sidebar, explorer = dashboard.sidebar, dashboard.explorer
    explorer.policy = "weighted"
    box = sidebar.weights.objects[0]
    box.value = -1
    assert explorer.weights == {} and "weight of Race" in sidebar.input_message.object
    box.value = 2
    assert explorer.weights == {"Race": 2}
