"""The Data tab without a browser: it shows the data the Explorer holds, its messages follow the data as
it stands (no stale refusal, the next step spelled out), every text quoting the data is escaped, and
uploads are capped on the server too."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pn = pytest.importorskip("panel")

from malformed_csv import MALFORMED  # noqa: E402

from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.main import Dashboard, sample_with_profile  # noqa: E402
from microrelease.app.tabs.data import steps  # noqa: E402
from microrelease.app.tabs.data.data_state import DataState  # noqa: E402
from microrelease.app.tabs.data.data_view import DataView  # noqa: E402
from microrelease.app.tabs.data.upload import CappedFileDropper  # noqa: E402
from microrelease.core import DataError, load_sample  # noqa: E402

PEOPLE = b"name,age,zip\nann,34,94142\nbob,36,94139\ncy,71,94139\n"
XSS_VALUE = '<img src=x onerror="window.__xss=1">'
XSS_FILE = '<img src=y onerror="window.__xss=1">.csv'
XSS_COLUMN = '<img src=z onerror="window.__xss=1">'


@pytest.fixture(autouse=True)
def _reset_panel_state():
    yield
    pn.state.reset()


@pytest.fixture
def state():
    return DataState(explorer=Explorer(*sample_with_profile("samarati"), k=2))


def texts(view: DataView) -> list[str]:
    """The text of every pane and every Tabulator column title the view shows."""
    layout = view.__panel__()
    found = [str(p.object) for p in layout.select(pn.pane.HTML) + layout.select(pn.pane.Markdown)]
    return found + [t for table in layout.select(pn.widgets.Tabulator) for t in table.titles.values()]


def test_the_tab_starts_with_the_data_the_explorer_holds(state):
    assert state.source == "sample: samarati"
    assert state.table.shape == (9, 2) and state.quasi_identifiers == ["Race", "ZIP"]
    assert {q: h.height for q, h in state.hierarchies.items()} == {"Race": 1, "ZIP": 2}
    assert state.run_state == "loaded" and state.in_explorer

    view = DataView(state=state)
    assert len(view.table.value) == 9 and view.table.visible
    assert [s.value for s in view.roles.objects] == ["quasi-identifier", "quasi-identifier"]
    assert view.qi.value == "Race" and list(view.preview.value.iloc[:, 0]) == ["asian", "black", "white"]
    assert "Loaded 9 rows (sample: samarati); lattice of 6 nodes." in view.status.object
    assert "<td>ZIP</td><td>2</td>" in view.overview.object and "94138 → 9413* → 941**" in view.overview.object
    assert "Produced: the lattice profile (6 nodes)" in view.steps["run"].object
    assert steps.next_step(state).startswith("Done: the other tabs explore this data.")


def test_the_sensitive_attribute_of_a_sample_shows_its_role():
    state = DataState(explorer=Explorer(*sample_with_profile("adult"), k=5))
    assert state.roles["salary-class"] == "sensitive" and len(state.quasi_identifiers) == 8


def test_the_tab_follows_a_dataset_loaded_into_the_explorer(state):
    state.explorer.load(load_sample("toy"))
    assert state.source == "sample: toy" and state.quasi_identifiers == ["age", "gender", "zipcode"]
    assert state.in_explorer and state.run_state == "loaded"


def test_an_upload_clears_a_stale_refusal_and_every_step_says_what_comes_next(state):
    view = DataView(state=state)
    state.load_csv(PEOPLE, "people.csv")
    view._guard(state.run)  # nothing marked as quasi-identifier
    assert "⚠ mark at least one column as quasi-identifier" in view.status.object

    state.load_csv(PEOPLE, "people2.csv")
    assert "mark at least one" not in view.status.object and "Read 3 rows × 3 columns from people2.csv" in view.status.object
    assert steps.next_step(state) == ("Next: mark columns as quasi-identifier, give each a hierarchy, then Run. "
                                      "Until then the other tabs show sample: samarati.")
    assert not state.in_explorer and "Produces: the lattice profile the other tabs explore." in view.steps["run"].object

    state.set_role("age", "quasi-identifier")
    assert steps.next_step(state).startswith("Next: give age a hierarchy (build one or load an ARX file), then Run.")
    view._guard(state.build, "age", "taxonomy", "oops")  # a refusal ...
    assert "⚠ hierarchy of &#x27;age&#x27;: cannot read the builder options" in view.status.object
    state.set_role("zip", "quasi-identifier")  # ... that no longer holds once the roles change
    assert "⚠" not in view.status.object
    state.build("age", "intervals", "10,20")
    state.build("zip", "masking", "1,2")
    assert steps.next_step(state).startswith("Next: Run to build the lattice profile (16 nodes).")

    state.run()
    assert state.in_explorer and state.explorer.dataset.n_rows == 3
    assert "Loaded 3 rows (people2.csv); lattice of 16 nodes." in view.status.object
    assert "Produced: the lattice profile (16 nodes)" in view.steps["run"].object
    state.set_role("name", "identifier")
    assert not state.in_explorer and steps.next_step(state).startswith("Next: Run")


def test_a_hierarchy_missing_data_values_is_the_next_step(state):
    state.load_csv(PEOPLE, "people.csv")
    state.set_role("zip", "quasi-identifier")
    state.load_hierarchy("zip", b"94142;*\n")
    assert steps.next_step(state).startswith("Next: extend the hierarchy of zip to every data value")
    assert "data values missing in zip" in steps.hierarchies_step(state)


def test_every_text_quoting_the_data_is_escaped_in_the_view(state):
    view = DataView(state=state)
    content = f"age,{XSS_COLUMN}\n{XSS_VALUE},2\n1,3\n".encode()
    state.load_csv(content, XSS_FILE)
    state.set_role("age", "quasi-identifier")
    state.set_role(XSS_COLUMN, "quasi-identifier")
    state.load_hierarchy("age", b"1;*\n")  # misses the payload value
    view.qi.value = "age"
    view._guard(state.build, XSS_COLUMN, "taxonomy", f"{XSS_VALUE}>*")  # refused, quoting the value
    shown = texts(view)
    assert not [t for t in shown if "<img" in t], [t for t in shown if "<img" in t]
    assert "&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;" in view.coverage.object  # missing, quoted
    assert "&lt;img src=y" in view.steps["data"].object and "&lt;img src=z" in view.overview.object
    assert "&lt;img src=z" in view.table.titles[XSS_COLUMN]


def test_the_first_upload_shows_its_confirmation_and_the_widget_lets_go_of_the_file(state):
    view = DataView(state=state)
    view.upload.value = {"people.csv": PEOPLE.decode()}  # the browser decodes a text/* file
    assert "Read 3 rows × 3 columns from people.csv" in view.status.object
    assert view.upload.value == {} and list(state.table.columns) == ["name", "age", "zip"]
    view.upload.param.trigger("value")  # a file removed in the widget: nothing to load
    assert state.source == "people.csv"


def test_an_upload_past_the_cap_is_dropped_on_the_server_and_named(state):
    view = DataView(state=state)
    dropper = CappedFileDropper(cap=1_000_000, chunk_size=400_000)
    dropper.param.watch(view._dropped, "refused")

    def chunk(i: int, n: int = 400_000, name: str = "big.csv"):
        return SimpleNamespace(event_name="upload_event",
                               data={"name": name, "chunk": i, "total_chunks": 4, "type": "text/csv", "data": b"x" * n})

    for i in (1, 2, 3, 4):
        dropper._process_event(chunk(i))
    assert dropper.value == {} and dropper._file_buffer == {} and dropper.refused == ("big.csv", 1_200_000)
    assert "⚠ big.csv is at least 1.2 MB; uploads are limited to 1 MB" in view.status.object
    dropper._process_event(SimpleNamespace(event_name="upload_event", data={
        "name": "ok.csv", "chunk": 1, "total_chunks": 1, "type": "application/octet-stream", "data": b"a,b\n1,2\n"}))
    assert dropper.take() == [("ok.csv", b"a,b\n1,2\n")]
    assert dropper.max_file_size == "1MB" and view.upload.max_file_size == "50MB"


def test_an_upload_given_as_text_keeps_its_header_without_the_byte_order_mark(state):
    state.load_csv("\ufeffa;b\n1;2\n", "bom.csv")
    assert list(state.table.columns) == ["a", "b"] and "separator ';'" in state.message


def test_the_dashboard_data_tab_opens_on_its_sample():
    data = Dashboard(sample="samarati").views["data"]
    assert data.state.source == "sample: samarati" and len(data.roles.objects) == 2


def test_a_change_made_while_the_profile_builds_is_not_taken_for_what_was_loaded(state):
    import threading

    state.load_csv(PEOPLE, "people.csv")
    state.set_role("age", "quasi-identifier")
    state.build("age", "intervals", "10,20")
    handed, done = [], threading.Event()
    state.hand_back = lambda fn: (handed.append(fn), done.set())
    state.run()
    state.set_role("zip", "quasi-identifier")  # while the worker builds the profile
    assert done.wait(60)
    handed[0]()  # on the page's thread
    assert state.explorer.dataset.quasi_identifiers == ("age",) and state.run_state == "loaded"
    assert not state.in_explorer and state.quasi_identifiers == ["age", "zip"]  # the change is kept, not loaded
    assert "Run again for the changes made since" in steps.status_line(state)
    assert steps.next_step(state).startswith("Next: give zip a hierarchy")


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_an_upload_breaking_the_reading_rule_is_refused_with_the_command_line_s_words(state, name):
    data, words = MALFORMED[name]
    view = DataView(state=state)
    view.upload.value = {f"{name}.csv": data}
    assert state.refused and state.message == f"{name}.csv: {words}"
    assert state.source == "sample: samarati"  # the data before stays
    assert "microrelease-upload-" not in view.status.object  # the file is named as the user named it


def wide_csv(columns: int, rows: int = 30) -> bytes:
    header = ";".join(f"c{i}" for i in range(columns))
    body = "\n".join(";".join(str((r * 7 + i) % 10) for i in range(columns)) for r in range(rows))
    return f"{header}\n{body}\n".encode()


def test_a_5000_column_upload_gets_one_list_per_role_and_a_preview_of_its_first_columns(state):
    view = DataView(state=state)
    view.upload.value = {"wide.csv": wide_csv(5_000)}
    assert state.message == "Read 30 rows × 5,000 columns from wide.csv (separator ';')."
    assert view.table.value.shape == (steps.PREVIEW_ROWS, steps.PREVIEW_COLUMNS)
    assert "their first 40 columns" in view.steps["data"].object
    assert not view.roles.select(pn.widgets.Select)  # no menu per column
    lists = view.role_lists
    assert sorted(lists) == ["identifier", "quasi-identifier", "sensitive"]
    assert all(len(box.options) == 5_000 and box.value == [] for box in lists.values())

    lists["quasi-identifier"].value = ["c17", "c4999"]
    assert state.quasi_identifiers == ["c17", "c4999"]
    assert steps.next_step(state).startswith("Next: give c17, c4999 a hierarchy")
    lists["sensitive"].value = ["c4999"]  # a column has one role: it leaves the other list
    assert state.roles["c4999"] == "sensitive" and lists["quasi-identifier"].value == ["c17"]
    lists["quasi-identifier"].value = []
    assert state.quasi_identifiers == [] and state.roles["c17"] == "insensitive"


def test_a_table_of_40_columns_keeps_a_menu_per_column(state):
    view = DataView(state=state)
    view.upload.value = {"forty.csv": wide_csv(steps.ROLE_MENUS)}
    assert len(view.roles.select(pn.widgets.Select)) == steps.ROLE_MENUS and view.role_lists == {}


def test_roles_given_as_a_list_name_an_unknown_column_or_role(state):
    state.load_csv(PEOPLE, "people.csv")
    with pytest.raises(DataError, match="no column 'nope' in the table"):
        state.set_roles("quasi-identifier", ["age", "nope"])
    with pytest.raises(DataError, match="unknown role 'secret'"):
        state.set_roles("secret", ["age"])
    assert state.quasi_identifiers == []


def test_the_role_lists_of_a_wide_table_show_column_names_as_text(state):
    view = DataView(state=state)
    names = [f"c{i}" for i in range(60)] + [XSS_COLUMN]
    view.upload.value = {"wide.csv": (";".join(names) + "\n" + ";".join("1" * len(names)) + "\n").encode()}
    box = view.role_lists["quasi-identifier"]
    assert not [label for label in box.options if "<" in label]  # Choices.js renders a label as HTML
    box.value = [XSS_COLUMN]  # the value is the column's own name
    assert state.quasi_identifiers == [XSS_COLUMN]


def test_an_upload_s_separator_is_found_past_a_quoted_line_end_and_a_long_header(state):
    state.load_csv(b'a;b\n"x\ny";2\n3;4\n', "quoted.csv")
    assert state.table["a"].tolist() == ["x\ny", "3"] and "separator ';'" in state.message
    names = "|".join(f"income (USD, {i:05d})" for i in range(4_000))  # longer than the 64,000-character sample
    state.load_csv((names + "\n" + "|".join(["1"] * 4_000) + "\n").encode(), "long.csv")
    assert state.table.shape == (1, 4_000) and "separator '|'" in state.message


def test_one_row_and_one_column_are_said_in_the_singular(state):
    view = DataView(state=state)
    view.upload.value = {"one.csv": b"a\n1\n"}
    assert state.message.startswith("Read 1 row × 1 column from one.csv")
