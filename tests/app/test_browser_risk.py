"""Risk in the dashboard, in a real browser: a risk-based privacy model in the sidebar recolours the
lattice as the command line answers it, and the node details give the node's risk and quality."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from browser_util import IDLE, NODE_XY, errors, screenshot, set_number

STATUSES = """() => { for (const m of Bokeh.documents[0].all_models)
  if (m.type === 'ColumnDataSource' && m.data.levels && m.data.status) return Array.from(m.data.status); return [] }"""


def test_an_average_risk_limit_recolours_the_lattice_and_the_details_give_the_risk(served_app, served_app_log, page):
    url, _ = served_app
    page.goto(url)
    page.wait_for_function(IDLE)
    page.locator(".bk-tab", has_text="Data").first.click()
    page.locator(".sample-select select").select_option("adult")
    page.locator(".load-sample button").click()
    page.locator("#data-status", has_text="Loaded 30162 rows").wait_for()
    page.locator(".bk-tab", has_text="Lattice").first.click()
    set_number(page, ".k-input", 2)
    page.locator("#k", has_text="2").wait_for()
    set_number(page, ".maxsup-rows", 300)
    page.locator("#max-sup", has_text="300").wait_for()
    page.wait_for_function(IDLE)
    assert "fails privacy model" not in page.evaluate(STATUSES)

    set_number(page, ".max-risk-value", 0.01)
    page.wait_for_function(f"() => ({STATUSES})().includes('fails privacy model')")
    page.wait_for_function(IDLE)
    cli = subprocess.run([str(Path(sys.executable).parent / "microrelease"), "search", "--sample", "adult", "--k", "2",
                          "--max-sup", "300", "--max-risk", "0.01", "--json", "--quiet"],
                         capture_output=True, text=True, check=True)
    answer = json.loads(cli.stdout)
    page.locator("#n-kmin", has_text=str(len(answer["k_minimal"]))).wait_for()
    preferred = page.locator("#preferred").text_content()
    assert json.loads(preferred) == answer["preferred"]["vector"]
    screenshot(page, "adult_max_risk")

    xy = page.evaluate(NODE_XY, preferred)
    assert xy is not None, f"node {preferred} is not drawn"
    page.mouse.click(*xy)
    page.locator("#sel", has_text=preferred).wait_for()
    details = page.locator(".node-metrics")
    details.locator("text=Re-identification risk").first.wait_for()
    average = answer["preferred"]["distinct"] / (30162 - answer["preferred"]["suppressed"])
    assert average <= 0.01
    details.locator(f"text={average:.4f}").first.wait_for()  # the prosecutor's average, as the CLI's answer gives it
    details.locator("text=Precision (ARX)").first.wait_for()
    screenshot(page, "adult_risk_details")
    assert not errors(page), errors(page)
