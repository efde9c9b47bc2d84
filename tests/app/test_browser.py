"""The served dashboard in a real headless chromium: read the k-minimal nodes back from the page,
tap a node, load adult and compare the focused view with the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from browser_util import (
    FIGURES,
    IDLE,
    NODE_XY,
    PATIENCE_MS,
    errors,
    node_with_status,
    painted,
    screenshot,
    set_number,
)

# every test here also fails on an error the server logged while it ran
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("served_app_log")]

DRAWN = """() => { for (const m of Bokeh.documents[0].all_models)
  if (m.type === 'ColumnDataSource' && m.data.levels && m.data.vector) return m.data.vector.length; return -1 }"""
Y_RANGE = f"""() => {{ {FIGURES}
  for (const f of figs) for (const r of f.model.renderers) if (r.data_source && r.data_source.data.levels)
    return [f.model.y_range.start, f.model.y_range.end]; return null }}"""
DRAWN_WITH_STATUS = node_with_status("y")  # the highest such node: away from the frame's bottom edge




def open_tab(page, url: str, title: str | None = None) -> None:
    """Open the served page, wait until Bokeh is idle, then show the tab titled ``title`` (if given)."""
    page.goto(url)
    page.wait_for_function(IDLE)
    if title is not None:
        page.locator(".bk-tab", has_text=title).first.click()


def test_samarati_then_adult(served_app, page):
    url, _ = served_app
    open_tab(page, url)
    kmin = page.locator("#kmin")

    set_number(page, ".k-input", 2)
    set_number(page, ".maxsup-rows", 0)
    page.locator("#max-sup", has_text="0").wait_for()
    assert kmin.text_content() == "[0, 2] [1, 1]"
    screenshot(page, "samarati_k2_maxsup0")

    set_number(page, ".maxsup-rows", 2)
    page.locator("#kmin", has_text="[0, 1] [1, 0]").wait_for()
    assert kmin.text_content() == "[0, 1] [1, 0]"

    page.wait_for_function(IDLE)
    xy = page.evaluate(NODE_XY, "[1, 1]")
    assert xy is not None, "node [1, 1] is not drawn"
    page.mouse.click(*xy)
    page.locator("#sel", has_text="[1, 1]").wait_for()
    cells = page.locator(".released-table .tabulator-cell[tabulator-field='Race']")
    cells.first.wait_for()
    assert set(cells.all_text_contents()) == {"person"}
    zips = set(page.locator(".released-table .tabulator-cell[tabulator-field='ZIP']").all_text_contents())
    assert zips == {"9413*", "9414*"}
    screenshot(page, "samarati_tapped_1_1")

    # load adult through the Data tab
    page.locator(".bk-tab", has_text="Data").click()
    page.locator(".sample-select select").select_option("adult")
    page.locator(".load-sample button").click()
    page.locator("#data-status", has_text="Loaded 30162 rows").wait_for()
    page.locator(".bk-tab", has_text="Lattice").click()
    page.wait_for_function(IDLE)
    drawn = int(page.locator("#n-drawn").text_content())
    assert 0 < drawn <= 500
    page.wait_for_function(f"() => ({DRAWN})() === {drawn}")  # the browser holds exactly those points
    assert page.evaluate(Y_RANGE)[1] >= 13  # and the axis follows the new lattice
    assert page.locator("#view-mode").text_content() == "focused"
    k = int(page.locator("#k").text_content())
    max_sup = int(page.locator("#max-sup").text_content())
    n_kmin = int(page.locator("#n-kmin").text_content())
    cli = subprocess.run([str(Path(sys.executable).parent / "microrelease"), "search", "--sample", "adult", "--k", str(k),
                          "--max-sup", str(max_sup), "--json", "--quiet"], capture_output=True, text=True, check=True)
    assert n_kmin == len(json.loads(cli.stdout)["k_minimal"])
    screenshot(page, "adult_focused")

    # attribute disclosure: 0.2-closeness on salary-class, answered like the command line
    page.locator(".sensitive-select select").select_option("salary-class")
    set_number(page, ".t-value", 0.2)
    page.locator("#models", has_text="0.2-closeness").wait_for()
    page.wait_for_function(IDLE)
    cli = subprocess.run([str(Path(sys.executable).parent / "microrelease"), "search", "--sample", "adult", "--k", str(k),
                          "--max-sup", str(max_sup), "--sensitive", "salary-class", "--t-closeness", "0.2", "--json",
                          "--quiet"], capture_output=True, text=True, check=True)
    assert int(page.locator("#n-kmin").text_content()) == len(json.loads(cli.stdout)["k_minimal"])
    statuses = """() => { for (const m of Bokeh.documents[0].all_models)
      if (m.type === 'ColumnDataSource' && m.data.levels && m.data.status) return Array.from(m.data.status); return [] }"""
    assert "fails privacy model" in page.evaluate(statuses)
    screenshot(page, "adult_t_closeness")
    assert not errors(page), errors(page)
    outside = {u for u in page.requests if not u.replace("blob:", "").startswith(url)}
    assert not outside, f"the page fetched from outside the server: {outside}"


def test_each_browser_session_has_its_own_state(served_app, browser):
    url, _ = served_app
    first, second = browser.new_page(), browser.new_page()
    try:
        for pg in (first, second):
            pg.set_default_timeout(PATIENCE_MS)
            open_tab(pg, url)
        set_number(first, ".k-input", 3)
        first.locator("#k", has_text="3").wait_for()
        second.reload()
        second.wait_for_function(IDLE)
        assert second.locator("#k").text_content() == "2"
        assert first.locator("#k").text_content() == "3"
    finally:
        first.close()
        second.close()


def test_microaggregation_tab_compares_methods_and_exports(served_app, page, tmp_path):
    import pandas as pd

    from microrelease.app.tabs.microaggregation.microaggregation_state import measure
    from microrelease.core.data.samples import microdata_sample

    url, _ = served_app
    open_tab(page, url, "Microaggregation")
    summary = page.locator(".micro-summary p")
    summary.locator("text=mdav-id").wait_for()
    expected = measure("census", "mdav-id", 3)[1]
    assert f"SSE/SST {expected['sse_sst']:.2f} %" in summary.text_content()
    curves = """() => { let n = 0; for (const m of Bokeh.documents[0].all_models)
      if (m.type === 'ColumnDataSource' && m.data.sse_sst) n += 1; return n }"""
    page.wait_for_function(f"() => ({curves})() === 3")  # one information-loss curve per method

    set_number(page, ".micro-k", 5)
    page.locator(".micro-method button", has_text="mdav-swap").click()
    summary.locator("text=k = 5").wait_for()
    summary.locator("text=mdav-swap").wait_for()
    expected = measure("census", "mdav-swap", 5)[1]
    assert f"SSE/SST {expected['sse_sst']:.2f} %" in summary.text_content()
    screenshot(page, "microaggregation_mdav_swap_k5")

    with page.expect_download() as info:
        page.locator(".micro-download button").click()
    path = tmp_path / "micro.csv"
    info.value.save_as(path)
    released, original = pd.read_csv(path), pd.read_csv(microdata_sample("census").path)
    assert len(released) == len(original) == 1080
    for name in microdata_sample("census").qi:  # swapped, never altered
        assert sorted(released[name]) == sorted(original[name])
    assert not errors(page), errors(page)


def test_differential_privacy_tab_compares_noises_like_the_core(served_app, page):
    from microrelease.core.dp import compare_noise

    url, _ = served_app
    open_tab(page, url, "Differential privacy")
    cell = page.locator(".dp-noise-table .tabulator-row").first.locator(".tabulator-cell[tabulator-field='mean_abs']")
    cell.wait_for()
    assert float(cell.text_content()) == pytest.approx(compare_noise(1.0).loc[0, "mean_abs"])
    set_number(page, ".dp-epsilon", 2)
    cell.locator("text=0.5").wait_for()
    rows = page.locator(".dp-noise-table .tabulator-row")
    names = [rows.nth(i).locator(".tabulator-cell[tabulator-field='mechanism']").text_content() for i in range(4)]
    values = [float(rows.nth(i).locator(".tabulator-cell[tabulator-field='P(|X|<=0.5Δ)']").text_content())
              for i in range(4)]
    expected = compare_noise(2.0).set_index("mechanism")["P(|X|<=0.5Δ)"].round(4)
    assert values == [expected[n] for n in names] and max(values) > values[names.index("laplace")]
    page.wait_for_function("""() => { for (const m of Bokeh.documents[0].all_models)
      if (m.type === 'Title' && String(m.text).includes('ε = 2')) return true; return false }""")  # plot redrawn
    screenshot(page, "differential_privacy_eps2")
    assert not errors(page), errors(page)


def test_sequences_tab_reports_the_guarantee_for_each_k(served_app, page):
    from microrelease.app.tabs.sequences.sequences_state import release_for

    url, _ = served_app
    open_tab(page, url, "Sequences")
    summary = page.locator(".seq-summary p")
    # conditions, with bounds for a first-ever run: numba's cache empty (a fresh clone), the server
    # compiles the sequential kernels for the first release, minutes on a busy 2-core machine
    summary.locator("text=k = 5").wait_for()
    page.locator(".seq-k button", has_text="10").click()
    summary.locator("text=k = 10").wait_for()
    release, attack, shared = release_for(10, False)
    text = summary.text_content()
    assert f"at least {shared - 1} others" in text and shared >= 10 and f"{attack:.3f}" in text
    page.locator(".seq-timelines .tabulator-row").first.wait_for()
    # the attackers at k: the QIs + 2 codes attacker against both parts, as the core computes it
    row = page.locator(".seq-attackers .tabulator-row", has_text="QIs + 2 codes")
    row.locator(".tabulator-cell[tabulator-field='both parts']", has_text=f"{attack:.3f}").wait_for()
    # the curves over every k come after the figures at k, drawn once their releases are made
    page.wait_for_function("""() => { for (const m of Bokeh.documents[0].all_models)
      if (m.type === 'Title' && String(m.text).startsWith('Attack success')) return true; return false }""")
    assert page.locator(".seq-curves-pending").count() == 0
    screenshot(page, "sequences_k10")
    # the multi-table study: its tables named, the guarantee over all of them, insurance rows shown
    page.locator(".seq-sample button", has_text="study").click()
    summary.locator("text=insurance").wait_for()
    release, attack, shared = release_for(10, False, "study")
    text = summary.text_content()
    assert "diagnoses, prescriptions" in text and f"at least {shared - 1} others" in text and shared >= 10
    assert f"{attack:.3f}" in text
    page.locator(".seq-timelines .tabulator-row", has_text="[").first.wait_for()
    screenshot(page, "sequences_study_k10")
    assert not errors(page), errors(page)


def test_export_downloads_the_node_shown_with_its_models(served_app, page, tmp_path):
    import hashlib

    import pandas as pd
    from playwright.sync_api import expect

    url, _ = served_app
    open_tab(page, url, "Data")
    page.locator(".sample-select select").select_option("adult")
    page.locator(".load-sample button").click()
    page.locator("#data-status", has_text="Loaded 30162 rows").wait_for()
    page.locator(".bk-tab", has_text="Lattice").click()
    set_number(page, ".k-input", 5)
    page.locator("#k", has_text="5").wait_for()
    set_number(page, ".maxsup-rows", 301)
    page.locator("#max-sup", has_text="301").wait_for()
    page.locator(".sensitive-select select").select_option("salary-class")
    set_number(page, ".t-value", 0.2)
    page.locator("#models", has_text="0.2-closeness").wait_for()
    page.wait_for_function(IDLE)

    # tap the preferred node: the details view shows its suppressed rows
    preferred = page.locator("#preferred").text_content()
    xy = page.evaluate(NODE_XY, preferred)
    assert xy is not None, f"node {preferred} is not drawn"
    page.mouse.click(*xy)
    page.locator("#sel", has_text=preferred).wait_for()
    shown = int(page.locator("#sel-suppressed").text_content())
    assert shown > 0  # classes failing 0.2-closeness go

    page.locator(".bk-tab", has_text="Export").click()
    page.locator("#export-node", has_text=preferred).wait_for()
    assert int(page.locator("#export-suppressed").text_content()) == shown
    with page.expect_download() as info:
        page.locator(".download-csv button").click()
    csv = tmp_path / "release.csv"
    info.value.save_as(csv)
    with page.expect_download() as info:
        page.locator(".download-report button").click()
    assert info.value.suggested_filename == "release.report.json"
    report_path = tmp_path / "release.report.json"
    info.value.save_as(report_path)
    released = pd.read_csv(csv, dtype=str, keep_default_na=False)
    report = json.loads(report_path.read_text())
    assert len(released) == 30162 - shown
    assert report["counts"]["suppressed_rows"] == shown
    assert report["parameters"]["privacy_models"] == ["0.2-closeness (equal distance)"]
    assert report["node"]["vector"] == json.loads(preferred)
    assert report["output"]["files"][0]["checksum"] == "sha256:" + hashlib.sha256(csv.read_bytes()).hexdigest()
    screenshot(page, "adult_export_t_closeness")

    # a node failing the model: the export is refused, with the reason
    page.locator(".bk-tab", has_text="Lattice").click()
    page.wait_for_function(f"() => ({DRAWN_WITH_STATUS})('fails privacy model') !== null")  # drawn again
    page.wait_for_function(IDLE)
    failing = page.evaluate(DRAWN_WITH_STATUS, "fails privacy model")
    page.mouse.click(*page.evaluate(NODE_XY, failing))
    page.locator("#sel", has_text=failing).wait_for()
    page.locator(".bk-tab", has_text="Export").click()
    page.locator("#export-refusal", has_text="0.2-closeness").wait_for()
    expect(page.locator(".download-csv button")).to_be_disabled()
    expect(page.locator(".download-report button")).to_be_disabled()
    screenshot(page, "adult_export_refused")
    assert not errors(page), errors(page)


def test_every_tab_opens_without_a_console_error(served_app, page):
    url, _ = served_app
    open_tab(page, url)
    tabs = page.locator(".bk-tab")
    names = tabs.all_text_contents()
    assert len(names) >= 8, names
    for name in names:
        page.locator(".bk-tab", has_text=name).first.click()
        page.wait_for_function(IDLE)
        painted(page)
    assert not errors(page), errors(page)
