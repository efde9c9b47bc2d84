"""Export = release: the dashboard's download is the release the screen shows (issue "Export = release").

Adult, k = 5, MaxSup = 1 % (301 rows), 0.2-closeness (ordered) on salary-class: the preferred node
suppresses 96 rows, all in classes failing the model; the exported files must say and be the same.
The files are checked here with plain pandas, not with the core's checks.
"""

from __future__ import annotations

import hashlib
import io
import json

import numpy as np
import pandas as pd
import pytest

pn = pytest.importorskip("panel")

from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.tabs.export.export_state import ExportState  # noqa: E402
from microrelease.app.tabs.export.export_view import ExportView  # noqa: E402
from microrelease.app.text import shown  # noqa: E402
from microrelease.core.exceptions import InvalidParameterError  # noqa: E402

N_ROWS, MAX_SUP = 30162, 301
T_MODEL = "0.2-closeness (ordered distance)"


@pytest.fixture(autouse=True)
def _reset_panel_state():
    yield
    pn.state.reset()


@pytest.fixture
def adult_t(adult, adult_profile):
    e = Explorer(adult, adult_profile, k=5, max_sup=MAX_SUP)
    e.sensitive_attribute, e.ground, e.t = "salary-class", "ordered", 0.2
    assert not e.message and [m.describe() for m in e.profile.models] == [T_MODEL]
    return e


def read(csv: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(csv), dtype=str, keep_default_na=False)


def test_export_writes_the_node_the_screen_shows(adult_t):
    e = adult_t
    shown = e.answer.node(e.preferred)
    assert shown.satisfies and shown.suppressed == 96
    export = ExportView(state=ExportState(explorer=e))
    assert not export.csv.disabled and not export.report.disabled and export.refusal.object == ""
    csv, report_bytes, page = export.state.files()
    table, report = read(csv), json.loads(report_bytes)

    assert len(table) == N_ROWS - 96 == report["output"]["rows"]
    assert report["counts"]["suppressed_rows"] == 96 == shown.suppressed
    why = report["counts"]["suppressed_by_reason"]
    assert why["class_smaller_than_k"] + why["class_failing_a_privacy_model"] == 96
    assert why["by_model"] == {T_MODEL: why["class_failing_a_privacy_model"]}
    assert report["parameters"]["privacy_models"] == [T_MODEL]
    assert report["parameters"]["sensitive"] == ["salary-class"]
    assert report["parameters"]["max_sup"] == MAX_SUP and report["parameters"]["k"] == 5
    assert report["parameters"]["chosen_by"] == "policy min-relative" and report["parameters"]["policy"] == "min-relative"
    assert report["node"]["vector"] == list(shown.vector)
    assert report["output"]["files"][0]["name"] == "release.csv"
    assert report["output"]["files"][0]["checksum"] == "sha256:" + hashlib.sha256(csv).hexdigest()
    assert "/" not in report["input"]["name"]  # a file name, no server path

    # the screen shows the counts the file carries
    assert "<span id='export-suppressed'>96</span>" in export.counts.object
    assert f"<span id='export-released'>{N_ROWS - 96}</span>" in export.counts.object
    assert T_MODEL in export.note.object and "preferred by min-relative" in export.note.object

    # the file is k-anonymous (plain groupby) and is the table the details view previews
    qi = list(e.dataset.quasi_identifiers)
    assert table.groupby(qi).size().min() >= 5
    preview = e.release(e.preferred).released.astype(str)
    assert sorted(map(tuple, preview[table.columns].to_numpy())) == sorted(map(tuple, table.to_numpy()))

    # both downloads come from one write; the next decision writes again
    assert export.state.files() == (csv, report_bytes, page)
    assert export._csv().read() == csv and export._report().read() == report_bytes and export._page().read() == page
    assert report["html_report"]["checksum"] == "sha256:" + hashlib.sha256(page).hexdigest()
    export.escape.value = True  # the view's box drives the state
    csv2, report2, _ = export.state.files()
    assert json.loads(report2)["formula_cells"]["escape_formulas"] is True
    assert json.loads(report2)["output"]["files"][0]["checksum"] == "sha256:" + hashlib.sha256(csv2).hexdigest()


def test_the_export_publishes_the_input_counts_only_when_asked(adult_t):
    export = ExportView(state=ExportState(explorer=adult_t))
    reference = json.loads(export.state.files().report)["reference_distribution"]
    assert reference["published"] is False and "counts" not in reference and T_MODEL in reference["models"]
    assert "not published" in export.state.files().html.decode()
    export.publish_reference.value = True  # the view's box drives the state; the decision is written again
    reference = json.loads(export.state.files().report)["reference_distribution"]
    counts = adult_t.dataset.table["salary-class"].value_counts()
    assert reference["published"] is True and reference["counts"] == [int(counts[v]) for v in reference["values"]]
    assert "suppressed rows" in reference["note"]


def test_selected_node_is_exported_as_the_cli_node_option(adult_t):
    e = adult_t
    e.selected = e.preferred
    export = ExportState(explorer=e)
    decision = export.decision()
    assert (decision.chosen_by, decision.policy, decision.weights) == ("node", None, None)
    assert decision.criteria.sensitive is e.applied_frequency and decision.criteria.models == e.applied_models
    assert decision.max_sup == MAX_SUP and decision.criteria.k.k == 5
    report = json.loads(export.files()[1])
    assert report["parameters"]["chosen_by"] == "node" and report["parameters"]["privacy_models"] == [T_MODEL]
    e.selected, e.policy, e.weights = None, "weighted", {"age": 3.0}
    decision = export.decision()
    assert (decision.chosen_by, decision.policy, decision.weights) == ("policy weighted", "weighted", {"age": 3.0})


def test_distinct_2_diversity_holds_in_every_exported_class(adult, adult_profile):
    e = Explorer(adult, adult_profile, k=5, max_sup=MAX_SUP)
    e.sensitive_attribute, e.l_kind, e.l = "salary-class", "distinct", 2
    assert [m.describe() for m in e.profile.models] == ["distinct 2-diversity"]
    csv, report, _ = ExportState(explorer=e).files()
    table = read(csv)
    report = json.loads(report)
    assert report["parameters"]["privacy_models"] == ["distinct 2-diversity"]
    shown = e.answer.node(e.preferred)
    assert len(table) == N_ROWS - shown.suppressed and report["counts"]["suppressed_rows"] == shown.suppressed
    classes = table.groupby(list(e.dataset.quasi_identifiers))
    assert classes["salary-class"].nunique().min() >= 2 and classes.size().min() >= 5


def test_failing_nodes_are_refused_with_the_reason(adult_t, tmp_path):
    e = adult_t
    status = e.status()
    model_fails = int(np.flatnonzero(status == 4)[0])  # k-anonymity alone would do, t-closeness does not
    e.selected = model_fails
    export = ExportView(state=ExportState(explorer=e))
    reason = export.state.refusal(model_fails)
    rows = int(e.profile.failing_by_model[T_MODEL][model_fails])
    assert rows > 0 and f"{T_MODEL}: {rows} rows" in reason and "MaxSup = 301" in reason
    assert export.csv.disabled and export.report.disabled and export.page.disabled
    assert shown(reason) in export.refusal.object  # escaped: a reason may quote data (a model's error)
    with pytest.raises(InvalidParameterError, match="cannot be exported"):
        export.state.files()
    with pytest.raises(InvalidParameterError, match="cannot be exported"):
        export.state.write(tmp_path / "x.csv")
    with pytest.raises(InvalidParameterError, match="over MaxSup"):  # the core refuses the same node
        export.state.decision().write(tmp_path / "x.csv")
    assert not list(tmp_path.iterdir())

    bottom = 0  # no generalization: far too many small classes
    assert not e.answer.satisfying[bottom]
    e.selected = bottom
    assert f"needs {e.answer.node(bottom).suppressed} suppressed rows" in export.state.refusal(bottom)
    assert export.csv.disabled
    e.selected = e.preferred
    assert not export.csv.disabled and export.state.refusal(e.preferred) == ""
    assert export.state.refusal(None).startswith("Nothing to export")


def test_the_export_carries_and_rechecks_the_risk_model_the_lattice_is_coloured_by(adult, adult_profile):
    """An average-risk limit set in the sidebar is the release's too: named in the report, re-checked on
    the written file (counted here with pandas), as `release --max-risk` does."""
    e = Explorer(adult, adult_profile, k=2, max_sup=MAX_SUP)
    if "max_risk" not in e.param:
        pytest.skip("no risk models in this Explorer")
    e.max_risk = 0.1
    assert not e.message and e.preferred is not None
    csv, report_bytes, _ = ExportState(explorer=e).files()
    report = json.loads(report_bytes)
    assert report["parameters"]["risk_criteria"] == ["average re-identification risk <= 0.1"]
    assert any("average re-identification risk" in c["check"] and c["passed"] for c in report["verification"])
    table = read(csv)
    qi = list(adult.quasi_identifiers)
    sizes = table.groupby(qi).size()
    assert len(sizes) / sizes.sum() <= 0.1  # the average prosecutor risk of the written rows
