"""The Data tab in a real headless chromium: it shows the sample the page opened on; the first upload
of a session is confirmed; a 20 MB CSV uploads; a file over the cap is refused in the browser with its
size and the cap, and the session lives on; data values, column names and file names render as text.
Every test also fails on a console error and on an error in the server's log."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_util import (
    IDLE,
    ServerLog,
    app_fixture,
    errors,
    log_path,
    log_quiet,
    screenshot,
    set_number,
)

pytestmark = pytest.mark.browser

LOG = "served_data_tab.log"
PEOPLE = b"name,age,zip\nann,34,94142\nbob,36,94139\ncy,71,94139\n"
XSS_VALUE = '<img src=x onerror="window.__xss=1">'
XSS_FILE = '<img src=y onerror="window.__xss=1">.csv'
XSS_COLUMN = '<img src=z onerror="window.__xss=1">'
# Every <img> of the page, through the shadow roots Bokeh renders into.
IMAGES = """() => { const found = []; const walk = n => { if (!n) return;
  if (n.tagName === 'IMG') found.push(n.getAttribute('src'));
  if (n.shadowRoot) walk(n.shadowRoot); for (const c of n.children || []) walk(c); };
  walk(document.documentElement); return found; }"""


# `microrelease app` on Samarati's example, with a log of its own (other modules serve at the same time)
data_app = app_fixture("--sample", "samarati", log_name=LOG)


@pytest.fixture(autouse=True)
def _no_errors(data_app, page):
    """Each test also fails on an error the server logged, or the page's console showed, while it ran."""
    log = ServerLog(LOG)
    yield
    page.wait_for_function(IDLE)  # let the server finish what the last action started
    log_quiet(log.path)
    page.context.close()  # here, so that an error on closing is this test's
    log.check()
    assert not errors(page), errors(page)


def open_data_tab(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function(IDLE)
    page.locator(".bk-tab", has_text="Data").first.click()
    page.locator(".data-preview .tabulator-row").first.wait_for()


def upload(page, name: str, content: bytes | None = None, path: Path | None = None, css: str = ".csv-upload",
           mime: str = "text/csv") -> None:
    box = page.locator(f"{css} input[type=file]").first
    box.set_input_files(path if path is not None else [{"name": name, "mimeType": mime, "buffer": content}])


def choose_role(page, column: int, role: str) -> None:
    page.locator(".role-select select").nth(column).select_option(role)


def test_the_tab_opens_on_the_data_the_other_tabs_explore(data_app, page):
    open_data_tab(page, data_app)
    page.locator("#data-status", has_text="Loaded 9 rows (sample: samarati); lattice of 6 nodes.").wait_for()
    assert page.locator(".data-preview .tabulator-row").count() == 9
    assert [s.input_value() for s in page.locator(".role-select select").all()] == ["quasi-identifier"] * 2
    overview = page.locator(".hierarchy-overview table").inner_text()
    assert "ZIP\t2\t" in overview and "94138 → 9413* → 941**" in overview
    assert page.locator(".hierarchy-preview .tabulator-row").count() == 3  # Race: asian, black, white
    assert "Produced: the lattice profile (6 nodes) the other tabs explore." in page.locator(".run-step i").inner_text()
    assert page.locator("#data-next").inner_text().startswith("Done: the other tabs explore this data.")
    screenshot(page, "data_tab_at_start")


def test_the_first_upload_is_confirmed_and_leads_to_a_run(data_app, page):
    open_data_tab(page, data_app)
    upload(page, "people.csv", PEOPLE)
    page.locator("#data-status", has_text="Read 3 rows × 3 columns from people.csv (separator ',').").wait_for()
    assert page.locator("#data-next").inner_text() == ("Next: mark columns as quasi-identifier, give each a "
                                                       "hierarchy, then Run. Until then the other tabs show sample: samarati.")
    assert page.locator(".data-preview .tabulator-row").count() == 3
    screenshot(page, "data_tab_after_upload")

    page.locator(".run button").click()  # refused: no quasi-identifier yet ...
    page.locator("#data-status", has_text="⚠ mark at least one column as quasi-identifier").wait_for()
    # ... which the next upload no longer shows (typed as Windows types a CSV: it arrives as bytes)
    upload(page, "people2.csv", PEOPLE, mime="application/vnd.ms-excel")
    page.locator("#data-status", has_text="Read 3 rows × 3 columns from people2.csv").wait_for()
    assert "⚠" not in page.locator("#data-status").inner_text()

    choose_role(page, 1, "quasi-identifier")
    page.locator("#data-next", has_text="Next: give age a hierarchy").wait_for()
    page.locator(".builder-options input").fill("10,20")
    page.locator(".build-hierarchy button").click()
    page.locator("#data-next", has_text="Next: Run to build the lattice profile (4 nodes).").wait_for()
    page.locator(".run button").click()
    page.locator("#data-status", has_text="Loaded 3 rows (people2.csv); lattice of 4 nodes.").wait_for()


def test_a_20_mb_csv_uploads(data_app, page, tmp_path):
    path = tmp_path / "twenty.csv"
    row = b"someone-with-a-long-name,42,94142,nurse,married\n"
    rows = 20_000_000 // len(row)
    path.write_bytes(b"name,age,zip,job,status\n" + row * rows)
    open_data_tab(page, data_app)
    upload(page, "", path=path)
    page.locator("#data-status", has_text=f"Read {rows:,} rows × 5 columns from twenty.csv").wait_for()
    # the status line can come before the widget's own last progress message
    page.locator(".csv-upload .filepond--root", has_text="Upload complete").wait_for()


def test_a_file_over_the_cap_is_refused_with_its_size_and_the_session_lives_on(data_app, page, tmp_path):
    path = tmp_path / "big.csv"
    with open(path, "wb") as f:
        f.write(b"a,b\n" + b"x" * 40 + b",1\n")
        f.truncate(51_000_000)
    open_data_tab(page, data_app)
    upload(page, "", path=path)
    dropper = page.locator(".csv-upload .filepond--root")
    dropper.locator(".filepond--file-status-main", has_text="File is too large").wait_for()
    assert "Maximum file size is 50 MB" in dropper.inner_text() and "51 MB" in dropper.inner_text()
    assert "Loaded 9 rows (sample: samarati)" in page.locator("#data-status").inner_text()  # nothing changed

    page.locator(".bk-tab", has_text="Lattice").first.click()
    set_number(page, ".k-input", 3)
    page.locator("#k", has_text="3").wait_for()  # the session still answers
    # the lattice goes on updating after the summary (closing the page meanwhile logs an error)
    page.wait_for_function(IDLE)
    log_quiet(log_path(LOG))


def test_data_values_column_names_and_file_names_render_as_text(data_app, page):
    open_data_tab(page, data_app)
    upload(page, XSS_FILE, f"v,{XSS_COLUMN}\n{XSS_VALUE},2\n1,3\n".encode())
    page.locator("#data-status", has_text=XSS_FILE).wait_for()
    choose_role(page, 0, "quasi-identifier")
    page.locator(".coverage", has_text="No hierarchy for v yet").wait_for()
    upload(page, "v.csv", b"1;*\n", css=".hierarchy-upload")
    missing = page.locator("#missing")
    missing.wait_for()
    assert f"'{XSS_VALUE}' (1 rows)" in missing.inner_text()
    assert XSS_COLUMN in page.locator(".role-select label").nth(1).inner_text()
    assert XSS_COLUMN in page.locator(".data-preview .tabulator-col-title").all_inner_texts()
    assert XSS_VALUE in page.locator(".data-preview .tabulator-cell").all_inner_texts()
    assert XSS_FILE in page.locator(".data-step i").inner_text()
    screenshot(page, "data_tab_payloads_as_text")
    assert page.evaluate("() => window.__xss") is None
    assert not [src for src in page.evaluate(IMAGES) if src in ("x", "y", "z")]


def test_a_5000_column_upload_answers_and_its_roles_are_chosen_by_name(data_app, page, tmp_path):
    names = [f"c{i}" for i in range(4_999)] + [XSS_COLUMN]
    path = tmp_path / "wide.csv"
    path.write_text(";".join(names) + "\n" + "\n".join(";".join(str((r + i) % 10) for i in range(5_000))
                                                       for r in range(30)) + "\n")
    open_data_tab(page, data_app)
    upload(page, "", path=path)
    page.locator("#data-status", has_text="Read 30 rows × 5,000 columns from wide.csv").wait_for()
    page.wait_for_function(IDLE)
    fields = page.locator(".data-preview .tabulator-col[tabulator-field]").evaluate_all(
        "els => els.map(e => e.getAttribute('tabulator-field')).filter(f => !f.startsWith('_'))")
    assert fields == names[:40]  # the first 40 columns
    assert page.locator(".role-select").count() == 0  # no menu per column
    qi = page.locator(".role-list-quasi-identifier")
    qi.locator("input.choices__input--cloned").fill("c4998")
    qi.locator(".choices__item--choice", has_text="c4998").first.click()
    page.locator("#data-next", has_text="Next: give c4998 a hierarchy").wait_for()
    qi.locator("input.choices__input--cloned").fill("onerror")  # a column name holding markup, listed as text
    qi.locator(".choices__item--choice", has_text="onerror").first.wait_for()
    screenshot(page, "data_tab_5000_columns")
    assert page.evaluate("() => window.__xss") is None
    assert not [src for src in page.evaluate(IMAGES) if src in ("x", "y", "z")]
