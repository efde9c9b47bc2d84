"""The distribution t-closeness is measured against, stated in the release report (issue 26): the
input's counts before suppression, in the EMD's order; the written file's re-check measures
against those counts; ``check_against_report`` re-checks from the report and the file alone, with
the figures against the file's own distribution beside. Every expected EMD here is computed from
the written file with plain pandas and the definitions (½Σ|p − q|, scipy's 1-D Wasserstein
distance, a transport linear program), never with the code under test."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog
from scipy.stats import wasserstein_distance

from microrelease.core import (
    Criteria,
    Hierarchy,
    OutputOptions,
    load_dataset,
    load_sample,
    prepare_models,
    write_release,
)
from microrelease.core.exceptions import DataError, VerificationError
from microrelease.core.lattice import release as release_module
from microrelease.core.lattice.reference import ReferenceCheck, check_against_report

# adult, salary-class, 0.5-closeness, k = 5: suppression moves the file's distribution enough that
# the worst class passes against the input and fails against the file
NODE, MAX_SUP, T = (1, 1, 0, 2, 1, 0, 2, 1), 4000, 0.5


def adult_release(tmp_path, name="out.csv"):
    dataset = load_sample("adult")
    prepared = prepare_models(dataset, "salary-class", {"t_closeness": f"{T}"})
    criteria = Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)
    published = write_release(dataset, NODE, tmp_path / name, criteria=criteria, max_sup=MAX_SUP)
    return dataset, published


def equal_emds(written: pd.DataFrame, qi, attribute, reference: pd.Series) -> pd.Series:
    """Each class's equal-distance EMD, ½Σ|p − q|, to ``reference`` (value -> count)."""
    q = reference / reference.sum()
    grid = pd.crosstab([written[c] for c in qi], written[attribute]).reindex(columns=q.index, fill_value=0)
    p = grid.div(grid.sum(axis=1), axis=0)
    return 0.5 * (p - q).abs().sum(axis=1)


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("adult")
    dataset, published = adult_release(tmp)
    written = pd.read_csv(tmp / "out.csv", dtype=str, keep_default_na=False)
    qi = list(dataset.quasi_identifiers)
    input_counts = dataset.table["salary-class"].value_counts()
    return {"tmp": tmp, "dataset": dataset, "report": published.data, "written": written, "qi": qi,
            "vs_input": equal_emds(written, qi, "salary-class", input_counts),
            "vs_file": equal_emds(written, qi, "salary-class", written["salary-class"].value_counts()),
            "input_counts": input_counts}


def test_suppression_moves_the_worst_class_over_t_against_the_file_only(adult):
    report = adult["report"]
    assert report["counts"]["suppressed_rows"] == 3044 and len(adult["vs_input"]) == 341
    assert adult["vs_input"].max() <= T < adult["vs_file"].max()  # the case: a claim only the input meets
    figures = report["reference_distribution"]["models"][f"{T}-closeness (equal distance)"]
    assert figures["classes"] == 341
    assert figures["worst_vs_reference"] == pytest.approx(adult["vs_input"].max(), abs=1e-12)
    assert figures["worst_vs_released_file"] == pytest.approx(adult["vs_file"].max(), abs=1e-12)
    assert figures["failing_vs_reference"] == 0
    assert figures["failing_vs_released_file"] == int((adult["vs_file"] > T).sum()) >= 1


def test_the_report_states_the_input_counts_in_the_emd_order(adult):
    ref = adult["report"]["reference_distribution"]
    assert ref["distribution"] == "input" and "before suppression" in ref["description"]
    assert ref["attribute"] == "salary-class"
    assert ref["values"] == sorted(adult["input_counts"].index)  # text order: not numbers
    assert ref["counts"] == [int(adult["input_counts"][v]) for v in ref["values"]]
    assert ref["total"] == adult["dataset"].n_rows == sum(ref["counts"])
    assert "input's distribution of the sensitive attribute" in ref["note"] and "checked" in ref["note"]


def test_the_verification_line_gives_both_figures(adult):
    check = {c["check"]: c for c in adult["report"]["verification"]}[f"{T}-closeness (equal distance)"]
    assert check["passed"]
    assert f"{adult['vs_input'].max():.6g} against the input's distribution" in check["detail"]
    assert f"{adult['vs_file'].max():.6g} against the released file's own" in check["detail"]
    assert {c["check"]: c["passed"] for c in adult["report"]["verification"]}["reference distribution"]


def test_check_against_report_gives_both_figures(adult):
    checked = check_against_report(adult["tmp"] / "out.report.json")
    assert isinstance(checked, ReferenceCheck) and checked.attribute == "salary-class" and checked.t == T
    assert len(checked.classes) == len(checked.distances) == len(checked.file_distances) == 341
    assert checked.worst == pytest.approx(adult["vs_input"].max(), abs=1e-12) and checked.passes
    assert checked.file_worst == pytest.approx(adult["vs_file"].max(), abs=1e-12) and not checked.file_passes
    by_class = dict(zip(checked.classes, checked.distances, strict=True))
    for key, expected in adult["vs_input"].items():
        assert by_class[key] == pytest.approx(expected, abs=1e-12)
    with pytest.raises(DataError, match="data file not found: .*elsewhere.csv"):  # data_path: that file, not the named
        check_against_report(adult["tmp"] / "out.report.json", adult["tmp"] / "elsewhere.csv")


def tampered(adult, tmp_path, edit) -> object:
    report = json.loads((adult["tmp"] / "out.report.json").read_text())
    edit(report["reference_distribution"])
    path = tmp_path / "out.report.json"
    path.write_text(json.dumps(report))
    return path


def test_a_reader_rechecks_from_the_report_counts(adult, tmp_path):
    data = adult["tmp"] / "out.csv"
    swapped = tampered(adult, tmp_path, lambda ref: ref.update(counts=ref["counts"][::-1]))
    with pytest.raises(VerificationError, match=r"reference distribution of 'salary-class': count 7508 of '<=50K' "
                                                r"is below the \d+ released rows holding it"):
        check_against_report(swapped, data)
    with pytest.raises(VerificationError, match="'salary-class': its counts sum to 30162, its total says 1"):
        check_against_report(tampered(adult, tmp_path, lambda ref: ref.update(total=1)), data)
    one_more = tampered(adult, tmp_path, lambda ref: ref.update(counts=[ref["counts"][0] + 1, ref["counts"][1]],
                                                                total=ref["total"] + 1))
    with pytest.raises(VerificationError, match="'salary-class': total 30163 is not the input's 30162 rows"):
        check_against_report(one_more, data)
    # counts still possible for this file, but not the input's: the figures follow the report's counts
    moved = tampered(adult, tmp_path, lambda ref: ref.update(counts=[ref["counts"][0] - 1500, ref["counts"][1] + 1500]))
    q = pd.Series({"<=50K": 22654 - 1500, ">50K": 7508 + 1500})
    assert check_against_report(moved, data).worst == pytest.approx(
        equal_emds(adult["written"], adult["qi"], "salary-class", q).max(), abs=1e-12)


def test_the_written_file_recheck_measures_against_the_report_counts(tmp_path, monkeypatch):
    stated = release_module.reference_section

    def swapped(sensitive, models):  # what the report would state, tampered before the re-check reads it
        section = stated(sensitive, models)
        return {**section, "counts": section["counts"][::-1]}

    monkeypatch.setattr(release_module, "reference_section", swapped)
    with pytest.raises(VerificationError) as failed:
        adult_release(tmp_path)
    assert "reference distribution of 'salary-class': count 7508 of '<=50K'" in str(failed.value)
    assert f"{T}-closeness (equal distance): " in str(failed.value) and "classes fail" in str(failed.value)
    assert not list(tmp_path.iterdir())  # nothing put in place


def test_the_page_shows_the_reference_distribution(adult):
    page = (adult["tmp"] / "out.report.html").read_text()
    section = page.split('<section id="reference">')[1].split("</section>")[0]
    assert "<h2>Reference distribution</h2>" in section
    assert "&lt;=50K" in section and "22,654" in section and "30,162" in section
    assert f"{adult['vs_input'].max():.6g}" in section and f"{adult['vs_file'].max():.6g}" in section


# a small table: one QI, zip; C1 is a class of one row, suppressed at k = 2
DISEASES = [("<script>alert(1)</script>", "odd", "*"), ("flu", "respiratory", "*"),
            ("bronchitis", "respiratory", "*"), ("gastritis", "digestive", "*"), ("ulcer", "digestive", "*")]
ROWS = [("A1", "flu", "2"), ("A1", "bronchitis", "9"), ("A2", "gastritis", "10"), ("A2", "<script>alert(1)</script>", "10"),
        ("B1", "flu", "2"), ("B2", "flu", "9"), ("B1", "gastritis", "2"), ("C1", "<script>alert(1)</script>", "10")]


def small_release(tmp_path, attribute, spec, hierarchy=None):
    table = pd.DataFrame(ROWS, columns=["zip", "disease", "score"])
    zips = Hierarchy("zip", [(z, z[0] + "*", "*") for z in ("A1", "A2", "B1", "B2", "C1")])
    dataset = load_dataset(table, qi=["zip"], hierarchies={"zip": zips}, sensitive=["disease", "score"])
    prepared = prepare_models(dataset, attribute, {"t_closeness": spec}, hierarchy=hierarchy)
    criteria = Criteria.of(2, *prepared.models, sensitive=prepared.sensitive_frequency)
    out = tmp_path / f"{attribute}.csv"
    published = write_release(dataset, (1,), out, criteria=criteria, max_sup=1)
    return table, published, out


def transport_emd(p, q, ground) -> float:
    """EMD by a transport linear program: min Σ f_ij d_ij, Σ_j f_ij = p_i, Σ_i f_ij = q_j."""
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m:(i + 1) * m] = 1
        a_eq[m + i, i::m] = 1
    done = linprog(np.asarray(ground).reshape(-1), A_eq=a_eq, b_eq=np.r_[p, q], bounds=(0, None), method="highs")
    return float(done.fun)


def test_hierarchical_reference_in_leaf_order_rechecked_by_a_reader(tmp_path):
    hierarchy = Hierarchy("disease", DISEASES)
    table, published, out = small_release(tmp_path, "disease", "1:hierarchical", hierarchy)
    ref = published.data["reference_distribution"]
    present = table["disease"].value_counts()
    leaves = [r[0] for r in DISEASES if r[0] in present.index]  # ulcer is absent from the data
    assert ref["values"] == leaves and ref["counts"] == [int(present[v]) for v in leaves] and ref["total"] == 8
    assert ref["hierarchy"] == [list(r) for r in DISEASES if r[0] in present.index]
    assert ref["order"] == "the hierarchy's leaf order"
    ground = [[next(j for j in range(3) if a[j] == b[j]) / 2 for b in DISEASES[:4]] for a in DISEASES[:4]]
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    grid = pd.crosstab(written["zip"], written["disease"]).reindex(columns=leaves, fill_value=0)
    p = grid.div(grid.sum(axis=1), axis=0).to_numpy()
    q_input = present[leaves].to_numpy() / 8
    q_file = written["disease"].value_counts().reindex(leaves, fill_value=0).to_numpy() / len(written)
    checked = check_against_report(tmp_path / "disease.report.json")
    assert checked.classes == (("A*",), ("B*",))
    assert checked.distances == pytest.approx([transport_emd(row, q_input, ground) for row in p], abs=1e-9)
    assert checked.file_distances == pytest.approx([transport_emd(row, q_file, ground) for row in p], abs=1e-9)


def test_ordered_reference_in_numeric_order(tmp_path):
    table, published, out = small_release(tmp_path, "score", "1:ordered")
    ref = published.data["reference_distribution"]
    assert ref["values"] == ["2", "9", "10"] and ref["counts"] == [3, 2, 3]  # numbers: "10" after "9"
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    where = {"2": 0.0, "9": 0.5, "10": 1.0}  # rank / (m − 1): the ordered distance
    checked = check_against_report(tmp_path / "score.report.json")
    for key, distance, own in zip(checked.classes, checked.distances, checked.file_distances, strict=True):
        rows = written.loc[written["zip"] == key[0], "score"].map(where)
        assert distance == pytest.approx(wasserstein_distance(rows, table["score"].map(where)), abs=1e-12)
        assert own == pytest.approx(wasserstein_distance(rows, written["score"].map(where)), abs=1e-12)


def test_a_sensitive_value_is_escaped_on_the_page(tmp_path):
    _, published, _ = small_release(tmp_path, "disease", "1:hierarchical", Hierarchy("disease", DISEASES))
    page = (tmp_path / "disease.report.html").read_text()
    section = page.split('<section id="reference">')[1].split("</section>")[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert "<script" not in page


def test_no_reference_without_a_model_measured_against_the_table(tmp_path):
    dataset = load_sample("adult")
    prepared = prepare_models(dataset, "salary-class", {"l_diversity": "distinct:2"})
    criteria = Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)
    published = write_release(dataset, (1, 4, 1, 1, 3, 2, 1, 2), tmp_path / "l.csv", criteria=criteria, max_sup=300)
    assert "reference_distribution" not in published.data
    assert 'id="reference"' not in (tmp_path / "l.report.html").read_text()
    with pytest.raises(VerificationError, match="l.report.json states no reference distribution"):
        check_against_report(tmp_path / "l.report.json")


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_formula_value_written_escaped_is_matched_to_its_reference_value(tmp_path, suffix):
    table = pd.DataFrame(ROWS, columns=["zip", "disease", "score"]).replace({"disease": {"gastritis": "=HYPERLINK(1)"}})
    zips = Hierarchy("zip", [(z, z[0] + "*", "*") for z in ("A1", "A2", "B1", "B2", "C1")])
    dataset = load_dataset(table, qi=["zip"], hierarchies={"zip": zips}, sensitive=["disease", "score"])
    prepared = prepare_models(dataset, "disease", {"t_closeness": "1:equal"})
    criteria = Criteria.of(2, *prepared.models, sensitive=prepared.sensitive_frequency)
    published = write_release(dataset, (1,), tmp_path / f"out.{suffix}", criteria=criteria, max_sup=1,
                              output=OutputOptions(escape=True))
    assert "=HYPERLINK(1)" in published.data["reference_distribution"]["values"]  # the input's value, as it is
    back = pd.read_csv(tmp_path / "out.csv", dtype=str) if suffix == "csv" else pd.read_parquet(tmp_path / "out.parquet")
    assert "'=HYPERLINK(1)" in set(back["disease"])  # the file holds it escaped
    counts = table["disease"].value_counts()
    expected = equal_emds(back.replace({"disease": {"'=HYPERLINK(1)": "=HYPERLINK(1)"}}), ["zip"], "disease", counts)
    assert check_against_report(tmp_path / "out.report.json").distances == pytest.approx(list(expected), abs=1e-12)
