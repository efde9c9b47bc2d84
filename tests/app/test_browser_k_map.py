"""k-map in the dashboard, in a real browser: served on adult-sample (its population known), a K in the
sidebar's k-map box recolours the lattice as the command line answers it, and the node details give the
population records of the smallest released class (re-counted here with pandas)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from adult_k_map import class_counts, population_counts
from browser_util import IDLE, NODE_XY, app_fixture, errors, follow_frames, screenshot, set_number, settle

from microrelease.core.data.samples import sample

LOG = "served_app_k_map.log"
STATUSES = """() => { for (const m of Bokeh.documents[0].all_models)
  if (m.type === 'ColumnDataSource' && m.data.levels && m.data.status) return Array.from(m.data.status); return [] }"""

url = app_fixture("--sample", "adult-sample", log_name=LOG)


@pytest.fixture(autouse=True)
def _no_server_errors(url, no_server_errors):
    no_server_errors(LOG)


def cli_search(k_map: int) -> dict:
    out = subprocess.run([str(Path(sys.executable).parent / "microrelease"), "search", "--sample", "adult-sample",
                          "--k", "1", "--k-map", str(k_map), "--json", "--quiet"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def smallest_class_population(vector) -> int:
    """At MaxSup 0 a satisfying node releases every class: the population rows of its smallest one."""
    sizes = class_counts(sample("adult-sample").path, vector)
    population = population_counts(vector).reindex(sizes.index)
    return int(population[sizes == sizes.min()].min())


def test_a_k_map_recolours_the_lattice_and_the_details_give_the_population(url, page):
    follow_frames(page)
    page.goto(url)
    page.wait_for_function(IDLE)
    page.locator(".bk-tab", has_text="Lattice").first.click()
    set_number(page, ".k-input", 1)
    page.locator("#k", has_text="1").wait_for()
    page.wait_for_function(IDLE)
    assert "fails privacy model" not in page.evaluate(STATUSES)

    for k_map in (5, 10):
        set_number(page, ".k-map-value", k_map)
        page.locator("#models", has_text=f"{k_map}-map").wait_for()  # the joint roll-up first
        page.wait_for_function(IDLE)
        answer = cli_search(k_map)
        page.locator("#n-kmin", has_text=str(len(answer["k_minimal"]))).wait_for()
        assert "fails privacy model" in page.evaluate(STATUSES)
        preferred = page.locator("#preferred").text_content()
        assert json.loads(preferred) == answer["preferred"]["vector"]
    screenshot(page, "adult_sample_k_map")

    xy = page.evaluate(NODE_XY, preferred)
    assert xy is not None, f"node {preferred} is not drawn"
    page.mouse.click(*xy)
    page.locator("#sel", has_text=preferred).wait_for()
    want = smallest_class_population(json.loads(preferred))
    assert want >= 10
    page.locator("#sel-population", has_text=f"{want:,}").wait_for()
    page.locator(".node-metrics", has_text="10-map: smallest released class").wait_for()
    screenshot(page, "adult_sample_k_map_details")
    settle(page)
    assert not errors(page), errors(page)
