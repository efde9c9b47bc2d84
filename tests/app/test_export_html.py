"""The Export tab offers the release report's page (HTML) from the same single write as the CSV and
its JSON report, and it is the page ``microrelease release`` writes for the same decision (but for
the time of writing and the checksums of the randomly ordered rows)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from browser_util import IDLE, errors, screenshot

pn = pytest.importorskip("panel")

from microrelease.app.cli import main  # noqa: E402
from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.main import sample_with_profile  # noqa: E402
from microrelease.app.tabs.export.export_state import ExportState  # noqa: E402
from microrelease.app.tabs.export.export_view import ExportView  # noqa: E402


@pytest.fixture(autouse=True)
def _reset_panel_state():
    yield
    pn.state.reset()


def comparable(page: bytes) -> str:
    """The page without what differs between two writes of one decision: the time, and the
    checksums (the rows are written in a new random order every time)."""
    text = re.sub(r"sha256:[0-9a-f]{64}", "sha256:-", page.decode("utf-8"))
    return re.sub(r"written \S+ by", "written - by", text)


def cli_page(tmp_path: Path, sample: str, k: int, max_sup: int, node: tuple | None) -> bytes:
    out = tmp_path / "release.csv"
    args = ["release", "--sample", sample, "--k", str(k), "--max-sup", str(max_sup), "--engine", "pandas",
            "--quiet", "-o", str(out), *(["--node", ",".join(map(str, node))] if node else [])]
    assert main(args) == 0
    return out.with_name("release.report.html").read_bytes()


@pytest.mark.parametrize(("sample", "k", "max_sup", "node"), [
    ("samarati", 2, 2, None),     # the policy's node
    ("samarati", 2, 0, (1, 1)),   # a node selected on the lattice, as --node
    ("adult", 5, 301, None),
])
def test_the_exported_page_is_the_cli_page_of_the_same_decision(tmp_path, capsys, sample, k, max_sup, node):
    e = Explorer(*sample_with_profile(sample), k=k, max_sup=max_sup)
    if node is not None:
        e.selected = e.lattice.index(node)
    view = ExportView(state=ExportState(explorer=e))
    files = view.state.files()
    assert view._page().read() == files.html and not view.page.disabled
    assert view.page.filename == "release.report.html" and "HTML" in view.page.label

    # one write: the JSON names the CSV and the page by their checksums
    report = json.loads(files.report)
    assert report["output"]["files"][0]["checksum"] == "sha256:" + hashlib.sha256(files.data).hexdigest()
    assert report["html_report"]["checksum"] == "sha256:" + hashlib.sha256(files.html).hexdigest()

    theirs = cli_page(tmp_path, sample, k, max_sup, node)
    printed = capsys.readouterr().out
    assert f"{tmp_path / 'release.report.json'}; to read and print: {tmp_path / 'release.report.html'}" in printed
    assert comparable(files.html) == comparable(theirs)
    assert str(report["node"]["vector"]) in files.html.decode()


# --- in the browser ------------------------------------------------------------------------------------


@pytest.mark.browser
def test_the_page_downloads_from_the_export_tab_and_fetches_nothing(served_app, served_app_log, page, browser,
                                                                     tmp_path):
    url, _ = served_app
    page.goto(url)
    page.wait_for_function(IDLE)
    page.locator(".bk-tab", has_text="Export").first.click()
    node = page.locator("#export-node").text_content()
    with page.expect_download() as info:
        page.locator(".download-report-html button").click()
    assert info.value.suggested_filename == "release.report.html"
    saved = tmp_path / "release.report.html"
    info.value.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    assert node in text and "<script" not in text.lower()
    assert not errors(page), errors(page)

    # opened on its own, the page asks for nothing but itself, and shows the histogram
    reader = browser.new_page(viewport={"width": 1100, "height": 900})
    requests, messages = [], []
    reader.on("request", lambda r: requests.append(r.url))
    reader.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    reader.goto(saved.as_uri())
    assert reader.locator("svg.histogram rect.bar").count() > 0
    screenshot(reader, "release_report_html")
    reader.close()
    assert requests == [saved.as_uri()] and not [m for m in messages if m.startswith("error")], (requests, messages)
    served_app_log.check()
