"""The distribution t-closeness is measured against, stated in the release report (issue 26): by
default which distribution and the worst class against it and against the file's own, without the
input's counts (minus the file's they give the suppressed rows' sensitive values); on request
(``publish_reference``) the counts, and the written file's re-check measures against them.
``verify_against_report`` re-checks from the report and the file (and the input, given). Every
expected EMD here is computed from the written file with plain pandas and the definitions
(½Σ|p − q|, scipy's 1-D Wasserstein distance, a transport linear program), never with the code
under test."""

from __future__ import annotations

import json
import re
import shutil

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
from microrelease.core.lattice import node_release as release_module
from microrelease.core.lattice.reference_check import ReferenceVerification, verify_against_report

# adult, salary-class, 0.5-closeness, k = 5: suppression moves the file's distribution enough that
# the worst class passes against the input and fails against the file
NODE, MAX_SUP, T = (1, 1, 0, 2, 1, 0, 2, 1), 4000, 0.5
MODEL = f"{T}-closeness (equal distance)"


def adult_release(tmp_path, name="out.csv", publish=False):
    dataset = load_sample("adult")
    prepared = prepare_models(dataset, "salary-class", {"t_closeness": f"{T}"})
    criteria = Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)
    published = write_release(dataset, NODE, tmp_path / name, criteria=criteria, max_sup=MAX_SUP,
                              output=OutputOptions(publish_reference=publish))
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
    _, with_counts = adult_release(tmp, "counts.csv", publish=True)
    written = pd.read_csv(tmp / "out.csv", dtype=str, keep_default_na=False)
    qi = list(dataset.quasi_identifiers)
    input_counts = dataset.table["salary-class"].value_counts()
    return {"tmp": tmp, "dataset": dataset, "report": published.data, "counts_report": with_counts.data,
            "written": written, "qi": qi, "input": dataset.source,
            "vs_input": equal_emds(written, qi, "salary-class", input_counts),
            "vs_file": equal_emds(written, qi, "salary-class", written["salary-class"].value_counts()),
            "input_counts": input_counts}


@pytest.mark.parametrize("which", ["report", "counts_report"])
def test_suppression_moves_the_worst_class_over_t_against_the_file_only(adult, which):
    report = adult[which]
    assert report["counts"]["suppressed_rows"] == 3044 and len(adult["vs_input"]) == 341
    assert adult["vs_input"].max() <= T < adult["vs_file"].max()  # the case: a claim only the input meets
    figures = report["reference_distribution"]["models"][MODEL]
    assert figures["classes"] == 341
    if which == "counts_report":
        assert figures["worst_vs_reference"] == pytest.approx(adult["vs_input"].max(), abs=1e-12)
    else:  # with the file it would give the counts (see below)
        assert "worst_vs_reference" in figures and figures["worst_vs_reference"] is None
    assert figures["worst_vs_released_file"] == pytest.approx(adult["vs_file"].max(), abs=1e-12)
    assert figures["failing_vs_reference"] == 0
    assert figures["failing_vs_released_file"] == int((adult["vs_file"] > T).sum()) >= 1


def test_by_default_the_report_names_the_distribution_without_its_counts(adult):
    ref = adult["report"]["reference_distribution"]
    assert ref["distribution"] == "input" and "before suppression" in ref["description"]
    assert ref["attribute"] == "salary-class" and ref["published"] is False
    assert not {"values", "counts", "total", "hierarchy"} & set(ref)
    assert "not published" in ref["note"] and "suppressed rows" in ref["note"]
    assert "22654" not in json.dumps(adult["report"])  # the input's count of '<=50K'


def test_the_worst_figure_against_the_input_would_give_the_counts_so_only_the_counts_report_has_it(adult):
    # two values: the equal-distance EMD of a class is |p − q| on '<=50K', so q = p ± the worst figure
    worst = adult["counts_report"]["reference_distribution"]["models"][MODEL]["worst_vs_reference"]
    key = adult["vs_input"].idxmax()
    rows = adult["written"].set_index(adult["qi"]).loc[key, "salary-class"]
    p = (rows == "<=50K").mean()
    candidates = {round((p + sign * worst) * 30162) for sign in (-1, 1) if 0 <= p + sign * worst <= 1}
    assert 22654 in candidates  # the input's count, from the file and one figure
    assert adult["report"]["reference_distribution"]["models"][MODEL]["worst_vs_reference"] is None


def test_on_request_the_report_states_the_input_counts_in_the_emd_order(adult):
    ref = adult["counts_report"]["reference_distribution"]
    assert ref["distribution"] == "input" and ref["published"] is True
    assert ref["values"] == sorted(adult["input_counts"].index)  # text order: not numbers
    assert ref["counts"] == [int(adult["input_counts"][v]) for v in ref["values"]]
    assert ref["total"] == adult["dataset"].n_rows == sum(ref["counts"])
    assert "these counts minus the released file's counts are the sensitive values of the suppressed rows" in ref["note"]


@pytest.mark.parametrize("which", ["report", "counts_report"])
def test_the_verification_line_gives_both_figures(adult, which):
    check = {c["check"]: c for c in adult[which]["verification"]}[MODEL]
    assert check["passed"]
    said = f"{adult['vs_input'].max():.6g} against the input's distribution"
    assert (said in check["detail"]) == (which == "counts_report")
    assert (which == "counts_report") != ("0 of 341 classes over t against the input's distribution (its worst figure "
                                          "unpublished)" in check["detail"])
    assert f"{adult['vs_file'].max():.6g} against the released file's own" in check["detail"]
    assert f"({int((adult['vs_file'] > T).sum())} of 341 classes over t against it)" in check["detail"]
    reference = {c["check"]: c for c in adult[which]["verification"]}["reference distribution"]
    assert reference["passed"] and ("not published" in reference["detail"]) == (which == "report")


def assert_input_figures(adult, checked):
    assert checked.worst == pytest.approx(adult["vs_input"].max(), abs=1e-12) and checked.satisfies
    by_class = dict(zip(checked.classes, checked.distances, strict=True))
    for key, expected in adult["vs_input"].items():
        assert by_class[key] == pytest.approx(expected, abs=1e-12)


def assert_file_figures(adult, checked):
    assert checked.file_worst == pytest.approx(adult["vs_file"].max(), abs=1e-12) and not checked.file_satisfies
    assert checked.file_failing == int((adult["vs_file"] > T).sum())
    by_class = dict(zip(checked.classes, checked.file_distances, strict=True))
    for key, expected in adult["vs_file"].items():
        assert by_class[key] == pytest.approx(expected, abs=1e-12)


def test_check_without_counts_or_input_gives_the_file_figures_and_says_what_it_cannot(adult):
    checked = verify_against_report(adult["tmp"] / "out.report.json")
    assert isinstance(checked, ReferenceVerification) and checked.attribute == "salary-class" and checked.t == T
    assert len(checked.classes) == len(checked.file_distances) == 341
    assert_file_figures(adult, checked)
    assert checked.distances is checked.worst is checked.satisfies is None and checked.reference == ""
    assert "cannot be checked without them or the input" in checked.unchecked


def test_check_with_the_input_agrees_with_the_published_counts(adult):
    from_input = verify_against_report(adult["tmp"] / "out.report.json", input=adult["input"])
    from_counts = verify_against_report(adult["tmp"] / "counts.report.json")
    both = verify_against_report(adult["tmp"] / "counts.report.json", input=adult["input"])
    for checked, source in ((from_input, "input"), (from_counts, "report"), (both, "report")):
        assert checked.reference == source and checked.unchecked == ""
        assert_input_figures(adult, checked)
        assert_file_figures(adult, checked)
    assert dict(zip(from_input.classes, from_input.distances, strict=True)) == pytest.approx(
        dict(zip(from_counts.classes, from_counts.distances, strict=True)), abs=1e-12)


def test_check_reads_the_named_file_not_another(adult, tmp_path):
    with pytest.raises(DataError, match="data file not found: .*elsewhere.csv"):  # data_path: that file, not the named
        verify_against_report(adult["tmp"] / "out.report.json", adult["tmp"] / "elsewhere.csv")
    copy = tmp_path / "copy.csv"
    shutil.copy(adult["tmp"] / "out.csv", copy)  # the same bytes under another name: the released file
    assert verify_against_report(adult["tmp"] / "out.report.json", copy).file_worst == pytest.approx(
        adult["vs_file"].max(), abs=1e-12)


def one_line(match: str, report_path, data=None, **options) -> str:
    with pytest.raises(VerificationError, match=match) as failed:
        verify_against_report(report_path, data, **options)
    assert "\n" not in str(failed.value)
    return str(failed.value)


def edited(adult, tmp_path, edit, name="out") -> object:
    """A copy of the report (default: the one without counts) beside its file, edited."""
    report = json.loads((adult["tmp"] / f"{name}.report.json").read_text())
    edit(report)
    path = tmp_path / f"{name}.report.json"
    path.write_text(json.dumps(report))
    shutil.copy(adult["tmp"] / f"{name}.csv", tmp_path / f"{name}.csv")
    return path


def test_a_file_that_is_not_the_released_one_is_refused(adult, tmp_path):
    other = tmp_path / "other.csv"
    adult["written"].iloc[:-1].to_csv(other, index=False)  # one row fewer
    one_line(r"other.csv: its SHA-256 is not the report's output.files\[0\].checksum", adult["tmp"] / "out.report.json",
             other)
    no_checksum = edited(adult, tmp_path, lambda r: r["output"]["files"][0].pop("checksum"))
    one_line(r"output.files\[0\].checksum: expected the released file's SHA-256, got None", no_checksum, other)
    # the input given must be this release's input
    changed = tmp_path / "input.csv"
    adult["dataset"].table.iloc[:-1].to_csv(changed, index=False)
    one_line(r"input.csv: its SHA-256 is not the report's input.checksum", adult["tmp"] / "out.report.json",
             input=changed)


def test_a_claimed_model_without_figures_or_with_a_nan_figure_is_refused(adult, tmp_path):
    name = next(iter(adult["report"]["reference_distribution"]["models"]))
    gone = edited(adult, tmp_path, lambda r: r["reference_distribution"]["models"].clear())
    one_line(r"reference_distribution.models\[.*\]: missing \(the report claims", gone)
    nan = edited(adult, tmp_path, lambda r: r["reference_distribution"]["models"][name].update(
        worst_vs_released_file=float("nan")))
    one_line(r"worst_vs_released_file: the report says nan", nan)
    parquet = edited(adult, tmp_path, lambda r: r["output"].update(format="parquet"))
    one_line(r"is not a readable Parquet file \(output.format says parquet\)", parquet)


@pytest.mark.parametrize(("edit", "match"), [
    (lambda r: r["reference_distribution"].update(counts=[0.5, 7508]), r"reference_distribution.counts: expected a "
     r"non-negative whole number, got 0.5"),
    (lambda r: r["reference_distribution"].update(counts=["22654", "7508"]), r"reference_distribution.counts: expected "
     r"a non-negative whole number, got '22654'"),
    (lambda r: r["reference_distribution"].update(counts=[-1, 7508]), r"reference_distribution.counts: .* got -1"),
    (lambda r: r["reference_distribution"].update(counts=[22654]), r"reference_distribution.counts: 1 counts for 2"),
    (lambda r: r["reference_distribution"].update(values="<=50K"), r"reference_distribution.values: expected a list"),
    (lambda r: r["reference_distribution"].update(total="30162"), r"reference_distribution.total: expected a non-neg"),
    (lambda r: r["parameters"].update(qi=[]), r"parameters.qi: expected a non-empty list of distinct names, got \[\]"),
    (lambda r: r["parameters"].update(qi="age"), r"parameters.qi: expected a list, got 'age'"),
    (lambda r: r["parameters"].update(qi=["no_such"]), r"column 'no_such' is not in counts.csv"),
    (lambda r: r["parameters"]["criteria"].pop("t-closeness"), r"parameters.criteria.t-closeness: expected T"),
    (lambda r: r["parameters"]["criteria"].update({"t-closeness": "2"}), r"parameters.criteria.t-closeness: .* got '2'"),
    (lambda r: r["output"].update(rows="26,000"), r"output.rows: expected a non-negative whole number, got '26,000'"),
    (lambda r: r["output"].update(files={}), r"output.files: expected a list, got \{\}"),
    (lambda r: r["counts"].update(input_rows=30162.0), r"counts.input_rows: expected a non-negative whole number"),
    (lambda r: r["counts"].update(released_rows=27119), r"counts.csv: 27118 rows, the report's counts.released_rows "
     r"says 27119"),
    (lambda r: r["reference_distribution"].update(attribute=3), r"reference_distribution.attribute: expected text"),
    (lambda r: r["reference_distribution"]["models"][MODEL].update(worst_vs_released_file=0.49),
     r"reference_distribution.models\['0.5-closeness \(equal distance\)'\].worst_vs_released_file: the report says "
     r"0.49, recomputed 0.503"),
    (lambda r: r["reference_distribution"]["models"][MODEL].update(worst_vs_reference=0.3),
     r"\.worst_vs_reference: the report says 0.3, recomputed 0.496"),
])
def test_a_malformed_or_tampered_report_is_refused_in_one_line_naming_the_field(adult, tmp_path, edit, match):
    one_line(match, edited(adult, tmp_path, edit, "counts"))


def test_a_reader_rechecks_from_the_report_counts(adult, tmp_path):
    def counts(**changes):
        return edited(adult, tmp_path, lambda r: r["reference_distribution"].update(**changes), "counts")

    one_line(r"reference distribution of 'salary-class': count 7508 of '<=50K' is below the \d+ released rows "
             r"holding it", counts(counts=[7508, 22654]))
    one_line("'salary-class': its counts sum to 30162, its total says 1", counts(total=1))
    one_line("'salary-class': total 30163 is not the input's 30162 rows", counts(counts=[22655, 7508], total=30163))
    # counts still possible for this file, but not the input's: the figures stated are not theirs
    q = pd.Series({"<=50K": 22654 - 1500, ">50K": 7508 + 1500})
    one_line(r"\.worst_vs_reference: the report says 0.49669\d*, recomputed 0.44696", counts(counts=list(q)))
    # with figures to match, the report is consistent with the file: only the input tells it apart
    emds = equal_emds(adult["written"], adult["qi"], "salary-class", q)

    def consistent(r):
        r["reference_distribution"].update(counts=list(q))
        r["reference_distribution"]["models"][MODEL].update(worst_vs_reference=emds.max(),
                                                            failing_vs_reference=int((emds > T).sum()))

    forged = edited(adult, tmp_path, consistent, "counts")
    assert pd.Series(verify_against_report(forged).distances).max() == pytest.approx(emds.max(), abs=1e-12)
    one_line("reference_distribution.counts: '<=50K' counted 21154, the input holds 22654", forged, input=adult["input"])


def test_the_written_file_recheck_measures_against_the_report_counts(tmp_path, monkeypatch):
    stated = release_module.reference_section

    def swapped(sensitive, models):  # what the report would state, tampered before the re-check reads it
        section = stated(sensitive, models)
        return {**section, "counts": section["counts"][::-1]}

    monkeypatch.setattr(release_module, "reference_section", swapped)
    with pytest.raises(VerificationError) as failed:
        adult_release(tmp_path, publish=True)
    assert "reference distribution of 'salary-class': count 7508 of '<=50K'" in str(failed.value)
    assert f"{MODEL}: " in str(failed.value) and "classes fail" in str(failed.value)
    assert not list(tmp_path.iterdir())  # nothing put in place


def test_the_written_file_recheck_catches_a_wrong_claim_without_published_counts(tmp_path, monkeypatch):
    decide = release_module.node_suppression

    def keeps_failing_classes(data, node, criteria):  # a release that forgot to suppress the classes over t
        found = decide(data, node, criteria)
        return release_module.NodeSuppression(found.node, found.k, found.sizes, found.sizes < found.k,
                                              {m: np.zeros_like(f) for m, f in found.failing.items()},
                                              found.class_levels)

    monkeypatch.setattr(release_module, "node_suppression", keeps_failing_classes)
    with pytest.raises(VerificationError, match=re.escape(MODEL) + r": \d+ of \d+ classes fail"):
        adult_release(tmp_path)
    assert not list(tmp_path.iterdir())


def page_section(path) -> str:
    return path.read_text().split('<section id="reference">')[1].split("</section>")[0]


def test_the_page_shows_the_reference_distribution(adult):
    section = page_section(adult["tmp"] / "counts.report.html")
    assert "<h2>Reference distribution</h2>" in section
    assert "&lt;=50K" in section and "22,654" in section and "30,162" in section
    assert f"{adult['vs_input'].max():.6g}" in section and f"{adult['vs_file'].max():.6g}" in section
    default = page_section(adult["tmp"] / "out.report.html")
    assert "not published" in default and 'id="reference-counts"' not in default and "22,654" not in default
    assert f"{adult['vs_input'].max():.6g}" not in default and f"{adult['vs_file'].max():.6g}" in default
    assert "0 classes over t (figure unpublished)" in default


# 40 ordinary rows and one outlier (zip 13000, age 99, HIV), suppressed at k = 5: the input's counts
# minus the file's would be the outlier's diagnosis
def outlier_table(tmp_path):
    rows = [(f"1200{i % 4}", str(20 + i % 20), d) for i, d in enumerate(["cancer"] * 15 + ["cold"] * 18 + ["flu"] * 7)]
    data = tmp_path / "patients.csv"
    pd.DataFrame([*rows, ("13000", "99", "HIV")], columns=["zip", "age", "diagnosis"]).to_csv(data, index=False)
    zips, ages = tmp_path / "zip.csv", tmp_path / "age.csv"
    zips.write_text("".join(f"{z};{z[:2]}***;*\n" for z in ("12000", "12001", "12002", "12003", "13000")))
    ages.write_text("".join(f"{a};{a // 10}0-{a // 10}9;*\n" for a in [*range(20, 40), 99]))
    return data, zips, ages


def test_the_default_report_does_not_give_away_the_outliers_diagnosis(tmp_path):
    data, zips, ages = outlier_table(tmp_path)
    dataset = load_dataset(data, qi=["zip", "age"], hierarchies={"zip": zips, "age": ages}, sensitive=["diagnosis"])
    prepared = prepare_models(dataset, "diagnosis", {"t_closeness": "1"})
    criteria = Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)
    for publish in (False, True):
        out = tmp_path / f"out_{publish}.csv"
        report = write_release(dataset, (2, 1), out, criteria=criteria, max_sup=1,
                               output=OutputOptions(publish_reference=publish)).data
        assert report["counts"]["suppressed_rows"] == 1 and "HIV" not in out.read_text()
        texts = (out.with_suffix(".report.json").read_text(), out.with_suffix(".report.html").read_text())
        assert all(("HIV" in text) == publish for text in texts)
    ref = report["reference_distribution"]  # published: minus the file's counts, exactly the outlier's value
    assert (ref["values"], ref["counts"]) == (["HIV", "cancer", "cold", "flu"], [1, 15, 18, 7])
    checked = verify_against_report(tmp_path / "out_False.report.json", input=data)
    assert checked.reference == "input" and checked.satisfies and checked.file_satisfies


def transport_emd(p, q, ground) -> float:
    """EMD by a transport linear program: min Σ f_ij d_ij, Σ_j f_ij = p_i, Σ_i f_ij = q_j."""
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m:(i + 1) * m] = 1
        a_eq[m + i, i::m] = 1
    done = linprog(np.asarray(ground).reshape(-1), A_eq=a_eq, b_eq=np.r_[p, q], bounds=(0, None), method="highs")
    return float(done.fun)


# a small table: one QI, zip; C1 is a class of one row, suppressed at k = 2
DISEASES = [("<script>alert(1)</script>", "odd", "*"), ("flu", "respiratory", "*"),
            ("bronchitis", "respiratory", "*"), ("gastritis", "digestive", "*"), ("ulcer", "digestive", "*")]
ROWS = [("A1", "flu", "2"), ("A1", "bronchitis", "9"), ("A2", "gastritis", "10"), ("A2", "<script>alert(1)</script>", "10"),
        ("B1", "flu", "2"), ("B2", "flu", "9"), ("B1", "gastritis", "2"), ("C1", "<script>alert(1)</script>", "10")]


def small_release(tmp_path, attribute, spec, hierarchy=None, *, rows=ROWS, publish=False):
    table = pd.DataFrame(rows, columns=["zip", "disease", "score"])
    table.to_csv(tmp_path / "input.csv", index=False)
    zips = Hierarchy("zip", [(z, z[0] + "*", "*") for z in ("A1", "A2", "B1", "B2", "C1")])
    dataset = load_dataset(table, qi=["zip"], hierarchies={"zip": zips}, sensitive=["disease", "score"])
    prepared = prepare_models(dataset, attribute, {"t_closeness": spec}, hierarchy=hierarchy)
    criteria = Criteria.of(2, *prepared.models, sensitive=prepared.sensitive_frequency)
    out = tmp_path / f"{attribute}.csv"
    published = write_release(dataset, (1,), out, criteria=criteria, max_sup=1,
                              output=OutputOptions(publish_reference=publish))
    return table, published, out


@pytest.mark.parametrize("publish", [False, True])
def test_hierarchical_reference_in_leaf_order_rechecked_by_a_reader(tmp_path, publish):
    hierarchy = Hierarchy("disease", DISEASES)
    table, published, out = small_release(tmp_path, "disease", "1:hierarchical", hierarchy, publish=publish)
    ref = published.data["reference_distribution"]
    present = table["disease"].value_counts()
    leaves = [r[0] for r in DISEASES if r[0] in present.index]  # ulcer is absent from the data
    assert ref["hierarchy"] == [list(r) for r in DISEASES if r[0] in present.index]  # here the file holds them all
    assert ref["order"] == "the hierarchy's leaf order"
    if publish:
        assert ref["values"] == leaves and ref["counts"] == [int(present[v]) for v in leaves] and ref["total"] == 8
    ground = [[next(j for j in range(3) if a[j] == b[j]) / 2 for b in DISEASES[:4]] for a in DISEASES[:4]]
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    grid = pd.crosstab(written["zip"], written["disease"]).reindex(columns=leaves, fill_value=0)
    p = grid.div(grid.sum(axis=1), axis=0).to_numpy()
    q_input = present[leaves].to_numpy() / 8
    q_file = written["disease"].value_counts().reindex(leaves, fill_value=0).to_numpy() / len(written)
    checked = verify_against_report(tmp_path / "disease.report.json", input=tmp_path / "input.csv")
    assert checked.classes == (("A*",), ("B*",))
    assert checked.distances == pytest.approx([transport_emd(row, q_input, ground) for row in p], abs=1e-9)
    assert checked.file_distances == pytest.approx([transport_emd(row, q_file, ground) for row in p], abs=1e-9)


def test_a_hierarchy_published_without_counts_lists_only_the_values_the_file_holds(tmp_path):
    rows = [*ROWS[:-1], ("C1", "ulcer", "10")]  # ulcer only in the suppressed class
    hierarchy = Hierarchy("disease", DISEASES)
    _, published, out = small_release(tmp_path, "disease", "1:hierarchical", hierarchy, rows=rows)
    ref = published.data["reference_distribution"]
    assert [r[0] for r in ref["hierarchy"]] == ["<script>alert(1)</script>", "flu", "bronchitis", "gastritis"]
    assert "ulcer" not in (tmp_path / "disease.report.json").read_text()
    one_line("reference_distribution.hierarchy: value 'ulcer' is not a leaf of it; give hierarchy=",
             tmp_path / "disease.report.json", input=tmp_path / "input.csv")
    checked = verify_against_report(tmp_path / "disease.report.json", input=tmp_path / "input.csv", hierarchy=hierarchy)
    assert checked.reference == "input" and len(checked.distances) == 2


def test_ordered_figures_against_the_file_rank_the_values_the_file_holds(tmp_path):
    rows = [*ROWS[:-1], ("C1", "<script>alert(1)</script>", "11")]  # 11 only in the suppressed class
    table, published, out = small_release(tmp_path, "score", "1:ordered", rows=rows, publish=True)
    ref = published.data["reference_distribution"]
    assert ref["values"] == ["2", "9", "10", "11"] and ref["counts"] == [3, 2, 2, 1]  # numbers: "10" after "9"
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    on_input = {"2": 0.0, "9": 1 / 3, "10": 2 / 3, "11": 1.0}  # rank / (m − 1): the ordered distance
    on_file = {"2": 0.0, "9": 0.5, "10": 1.0}  # the file's own values only: what a reader of it can rank
    checked = verify_against_report(tmp_path / "score.report.json")
    for key, distance, own in zip(checked.classes, checked.distances, checked.file_distances, strict=True):
        scores = written.loc[written["zip"] == key[0], "score"]
        assert distance == pytest.approx(wasserstein_distance(scores.map(on_input), table["score"].map(on_input)),
                                         abs=1e-12)
        assert own == pytest.approx(wasserstein_distance(scores.map(on_file), written["score"].map(on_file)), abs=1e-12)
    figures = ref["models"]["1-closeness (ordered distance)"]
    assert figures["worst_vs_released_file"] == pytest.approx(checked.file_worst, abs=1e-12)


def test_a_sensitive_value_is_escaped_on_the_page(tmp_path):
    _, published, _ = small_release(tmp_path, "disease", "1:hierarchical", Hierarchy("disease", DISEASES),
                                    publish=True)
    section = page_section(tmp_path / "disease.report.html")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert "<script" not in (tmp_path / "disease.report.html").read_text()


def test_no_reference_without_a_model_measured_against_the_table(tmp_path):
    dataset = load_sample("adult")
    prepared = prepare_models(dataset, "salary-class", {"l_diversity": "distinct:2"})
    criteria = Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)
    published = write_release(dataset, (1, 4, 1, 1, 3, 2, 1, 2), tmp_path / "l.csv", criteria=criteria, max_sup=300)
    assert "reference_distribution" not in published.data
    assert 'id="reference"' not in (tmp_path / "l.report.html").read_text()
    one_line("l.report.json states no reference distribution", tmp_path / "l.report.json")


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
@pytest.mark.parametrize("publish", [False, True])
def test_a_formula_value_written_escaped_is_matched_to_its_reference_value(tmp_path, suffix, publish):
    table = pd.DataFrame(ROWS, columns=["zip", "disease", "score"]).replace({"disease": {"gastritis": "=HYPERLINK(1)"}})
    zips = Hierarchy("zip", [(z, z[0] + "*", "*") for z in ("A1", "A2", "B1", "B2", "C1")])
    dataset = load_dataset(table, qi=["zip"], hierarchies={"zip": zips}, sensitive=["disease", "score"])
    prepared = prepare_models(dataset, "disease", {"t_closeness": "1:equal"})
    criteria = Criteria.of(2, *prepared.models, sensitive=prepared.sensitive_frequency)
    published = write_release(dataset, (1,), tmp_path / f"out.{suffix}", criteria=criteria, max_sup=1,
                              output=OutputOptions(escape=True, publish_reference=publish))
    back = pd.read_csv(tmp_path / "out.csv", dtype=str) if suffix == "csv" else pd.read_parquet(tmp_path / "out.parquet")
    assert "'=HYPERLINK(1)" in set(back["disease"])  # the file holds it escaped
    raw = back.replace({"disease": {"'=HYPERLINK(1)": "=HYPERLINK(1)"}})
    checked = verify_against_report(tmp_path / "out.report.json")
    assert checked.file_distances == pytest.approx(list(equal_emds(raw, ["zip"], "disease", raw["disease"].value_counts())),
                                                   abs=1e-12)
    if publish:
        assert "=HYPERLINK(1)" in published.data["reference_distribution"]["values"]  # the input's value, as it is
        expected = equal_emds(raw, ["zip"], "disease", table["disease"].value_counts())
        assert checked.distances == pytest.approx(list(expected), abs=1e-12)


FIELDS = ["reference_distribution", "reference_distribution.attribute", "reference_distribution.values",
          "reference_distribution.counts", "reference_distribution.total", "reference_distribution.published",
          "reference_distribution.hierarchy", "reference_distribution.models",
          "reference_distribution.models.1-closeness (hierarchical distance)", "parameters", "parameters.qi",
          "parameters.criteria", "parameters.criteria.t-closeness", "output", "output.files", "output.rows",
          "output.format", "counts", "counts.input_rows", "formula_cells", "input", "input.checksum", "input.name"]
WRONG = [None, "x", "", [], [None], {}, -1, 0.5, True, 10**30]


def test_any_field_of_the_wrong_kind_is_refused_in_one_line_never_a_crash(tmp_path):
    small_release(tmp_path, "disease", "1:hierarchical", Hierarchy("disease", DISEASES), publish=True)
    original = json.loads((tmp_path / "disease.report.json").read_text())
    path = tmp_path / "edited.report.json"
    for field in FIELDS:
        *parents, last = field.split(".")
        for wrong in WRONG:
            report = json.loads(json.dumps(original))
            node = report
            for key in parents:
                node = node[key]
            node[last] = wrong
            path.write_text(json.dumps(report))
            for options in ({}, {"input": tmp_path / "input.csv"}):
                try:
                    verify_against_report(path, tmp_path / "disease.csv", **options)
                except VerificationError as exc:
                    assert "\n" not in str(exc), (field, wrong)
