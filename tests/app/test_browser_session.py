"""One scripted session as a user runs it, in a real headless chromium: Samarati's example (a tap, the
Find_vector steps, an export), then adult (a tap on the preferred node, an export), then a CSV of one's
own (roles, a hierarchy built, the run, a tap). Zero console errors and zero server-log errors over the
whole session; a screenshot of every tab at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from browser_util import (
    IDLE,
    NODE_XY,
    app_fixture,
    errors,
    log_path,
    log_quiet,
    painted,
    screenshot,
    server_errors,
    set_number,
)
from playwright.sync_api import expect

from microrelease.core import build_profile, load_sample, query

pytestmark = pytest.mark.browser

LOG = "served_session.log"
PEOPLE = "name,age,zip\n" + "".join(f"p{i},{20 + i % 50},{94100 + i % 7}\n" for i in range(60))


session_app = app_fixture("--sample", "samarati", log_name=LOG)


def tab(page, title: str) -> None:
    page.locator(".bk-tab", has_text=title).first.click()
    page.wait_for_function(IDLE)


def tap(page, vector: str) -> None:
    tab(page, "Lattice")
    page.wait_for_function(f"() => ({NODE_XY})({json.dumps(vector)}) !== null")
    page.mouse.click(*page.evaluate(NODE_XY, vector))
    page.locator("#sel", has_text=vector).wait_for()


def export(page, tmp_path: Path, name: str) -> tuple[pd.DataFrame, dict, str]:
    tab(page, "Export")
    files = []
    for button in (".download-csv", ".download-report", ".download-report-html"):
        with page.expect_download() as info:
            page.locator(f"{button} button").click()
        path = tmp_path / f"{name}-{info.value.suggested_filename}"
        info.value.save_as(path)
        files.append(path)
    return pd.read_csv(files[0], dtype=str), json.loads(files[1].read_text()), files[2].read_text()


def test_a_whole_session_has_no_error(session_app, page, tmp_path):
    page.goto(session_app)
    page.wait_for_function(IDLE)

    # Samarati's example: a tap, Find_vector stepped through, an export of the tapped node
    set_number(page, ".k-input", 2)
    set_number(page, ".maxsup-rows", 2)
    page.locator("#max-sup", has_text="2").wait_for()
    tap(page, "[1, 1]")
    page.locator(".class-sizes canvas").first.wait_for()
    tab(page, "Teaching")
    trace = query(build_profile(load_sample("samarati")), 2, 2).find_vector().trace
    assert len(trace) >= 2
    page.locator("#fv-try", has_text=str(trace[0].tried)).wait_for()
    for step, probe in enumerate(trace[1:], start=2):  # every probe shown, in the core's order
        page.locator(".fv-next button").click()
        page.locator(".fv-probe", has_text=f"Probe {step} of {len(trace)}").wait_for()
        assert page.locator("#fv-try").inner_text() == str(probe.tried)
    expect(page.locator(".fv-next button")).to_be_disabled()
    released, report, html = export(page, tmp_path, "samarati")
    assert report["node"]["vector"] == [1, 1] and len(released) == report["counts"]["released_rows"]
    assert "<script" not in html.lower()

    # adult through the Data tab: the preferred node tapped and exported
    tab(page, "Data")
    page.locator(".sample-select select").select_option("adult")
    page.locator(".load-sample button").click()
    page.locator("#data-status", has_text="Loaded 30162 rows").wait_for()
    tab(page, "Lattice")
    preferred = page.locator("#preferred").inner_text()
    tap(page, preferred)
    released, report, _ = export(page, tmp_path, "adult")
    assert report["node"]["vector"] == json.loads(preferred) and len(released) == report["counts"]["released_rows"]

    # a CSV of one's own: roles, a hierarchy built, the run, a tap
    tab(page, "Data")
    page.locator(".csv-upload input[type=file]").first.set_input_files(
        [{"name": "people.csv", "mimeType": "text/csv", "buffer": PEOPLE.encode()}])
    page.locator("#data-status", has_text="Read 60 rows").wait_for()
    page.locator(".role-select select").nth(0).select_option("identifier")
    page.locator(".role-select select").nth(1).select_option("quasi-identifier")
    page.locator(".builder-options input").fill("10,20")
    page.locator(".build-hierarchy button").click()
    page.locator("#data-next", has_text="Run").wait_for()
    page.locator(".run button").click()
    page.locator("#data-status", has_text="Loaded 60 rows (people.csv)").wait_for()
    tab(page, "Lattice")
    tap(page, page.locator("#preferred").inner_text())
    released, report, _ = export(page, tmp_path, "people")
    assert "name" not in released.columns  # the identifier is never written

    for title in page.locator(".bk-tab").all_inner_texts():
        tab(page, title)
        page.wait_for_function(IDLE)
        painted(page)
        screenshot(page, "session_" + "".join(c if c.isalnum() else "_" for c in title).strip("_").lower())
    page.wait_for_function(IDLE)
    log_quiet(log_path(LOG))
    assert not errors(page), errors(page)
    assert not server_errors(log_path(LOG)), server_errors(log_path(LOG))
