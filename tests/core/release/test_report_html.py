"""The release report a person reads (OUT.report.html): its figures are recounted here from the
written CSV with plain pandas; data, column and file names cannot become markup; it fetches
nothing; it is written, replaced and cleaned up with the release, never apart from it."""

from __future__ import annotations

import hashlib
import importlib
import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microrelease.core import (
    Criteria,
    Hierarchy,
    OutputOptions,
    build_profile,
    load_dataset,
    masking,
    query,
    write_release,
)
from microrelease.core.data.samples import sample, sample_data_folder
from microrelease.core.dp.dp_writing import write_dp_release
from microrelease.core.dp.microdata import dp_release
from microrelease.core.exceptions import OutputError
from microrelease.core.lattice.node_release import NodeRelease
from microrelease.core.lattice.policies import POLICIES, weight_vector
from microrelease.core.micro.micro_release import write_microaggregation
from microrelease.core.micro.microaggregation import microaggregate
from microrelease.core.release import file_target, html_path, report_path

ADULT = sample("adult")
# the module, not the function of the same name that the package exports
publish_module = importlib.import_module("microrelease.core.release.publishing")
VOID = {"meta", "br", "hr", "img", "input", "link"}


@dataclass
class Element:
    tag: str
    attrs: dict
    text: str = ""
    parts: list = field(default_factory=list)


class Page(HTMLParser):
    """Every element with its attributes and its text (the text of everything inside it)."""

    def __init__(self, text: str):
        super().__init__()
        self.elements: list[Element] = []
        self.open: list[Element] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs))
        self.elements.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_endtag(self, tag):
        element = self.open.pop()
        assert element.tag == tag, (element.tag, tag)  # well nested
        element.text = "".join(element.parts)

    def handle_data(self, data):
        for element in self.open:
            element.parts.append(data)

    def by_id(self, id_: str) -> Element:
        (found,) = [e for e in self.elements if e.attrs.get("id") == id_]
        return found

    def all(self, tag: str, class_: str | None = None) -> list[Element]:
        return [e for e in self.elements if e.tag == tag and (class_ is None or class_ in e.attrs.get("class", "").split())]

    def table_rows(self, id_: str) -> list[list[str]]:
        table = self.by_id(id_)
        start = self.elements.index(table)
        rows, row = [], None
        for e in self.elements[start + 1:]:
            if e.tag == "table":
                break
            if e.tag == "tr":
                row = []
                rows.append(row)
            elif e.tag in ("td", "th") and row is not None:
                row.append(e)
        return rows[1:]  # without the header


def assert_fetches_nothing(page: Page, text: str) -> None:
    assert not page.all("script") and "<script" not in text.lower()
    fetching = {"src", "href", "xlink:href", "srcset", "action", "formaction", "poster", "background", "data"}
    assert not [e for e in page.elements if fetching & set(e.attrs)]
    assert not [e for e in page.elements for a in e.attrs if a.startswith("on")]  # no event handler
    assert "://" not in text and "url(" not in text and "@import" not in text
    (csp,) = [e for e in page.all("meta") if e.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in csp.attrs["content"]


@pytest.fixture(scope="module")
def adult_release(tmp_path_factory, adult, adult_profile):
    """Adult, k = 5, MaxSup 301 rows, the node min-relative prefers (as ``microrelease release``)."""
    node = query(adult_profile, 5, 301).preferred("min-relative")
    out = tmp_path_factory.mktemp("adult") / "adult.csv"
    published = NodeRelease(adult, node.vector, Criteria.of(5), 301, chosen_by="policy min-relative", policy="min-relative").write(out)
    return published, out, node


def test_the_page_holds_the_decision_and_the_figures_of_the_written_file(adult_release, adult):
    published, out, chosen = adult_release
    text = html_path(out).read_text(encoding="utf-8")
    page = Page(text)
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    qi = list(ADULT.qi)

    # the decision: the node's levels named (from the hierarchies), k, MaxSup, the policy and why
    named = page.by_id("node-named").text
    for i, (q, d) in enumerate(zip(qi, chosen.vector, strict=True)):
        assert f"{q}: {adult.hierarchies[i].level_names[d]}" in named
    assert page.by_id("param-k").text == "5" and page.by_id("param-max-sup").attrs["data-value"] == "301"
    assert "min-relative" in page.by_id("why").text and "k-minimal" in page.by_id("why").text

    # the histogram: one bar per class size, its count recounted from the CSV
    sizes = written.groupby(qi).size()
    recount = sizes.value_counts().sort_index()
    bars = [(int(r.attrs["data-size"]), int(r.attrs["data-count"])) for r in page.all("rect", "bar")]
    assert bars == list(recount.items()) and len(bars) > 3
    assert [[int(c.text.replace(",", "")) for c in row[:2]] for row in page.table_rows("histogram-table")] == \
        [list(b) for b in bars]

    # the risk, recomputed from the CSV
    assert float(page.by_id("risk-highest").attrs["data-value"]) == pytest.approx(1 / sizes.min())
    assert float(page.by_id("risk-average").attrs["data-value"]) == pytest.approx(len(sizes) / len(written))
    for span in page.all("span", "risk-below"):
        below = int(span.attrs["data-below"])
        assert int(span.attrs["data-records"]) == int(sizes[sizes < below].sum())
        assert float(span.attrs["data-share"]) == pytest.approx(sizes[sizes < below].sum() / len(written))

    # utility per attribute: level of height, and the share of the input's distinct values kept
    table = pd.read_csv(ADULT.path, sep=";", dtype=str, keep_default_na=False)
    rows = page.table_rows("utility-table")
    assert [r[0].text for r in rows] == qi
    for row, q, d, h in zip(rows, qi, chosen.vector, adult.lattice.heights, strict=True):
        assert (int(row[1].text), int(row[2].text)) == (d, h)
        kept = page.elements[page.elements.index(row[6]) + 1]  # the cell's span carries the figure
        assert float(kept.attrs["data-value"]) == pytest.approx(written[q].nunique() / table[q].nunique())

    # the lattice position: the height, and k-minimal as the whole-lattice answer says
    assert f"Height {sum(chosen.vector)} of {sum(adult.lattice.heights)}" in page.by_id("k-minimal").text
    assert page.by_id("k-minimal").attrs["data-value"] == "True" and chosen.k_minimal

    # the checks run on the file, as the JSON lists them; the JSON names the page by its SHA-256
    report = json.loads(report_path(out).read_text())
    assert [r[0].text for r in page.table_rows("checks-table")] == [c["check"] for c in report["verification"]]
    assert "class sizes" in [c["check"] for c in report["verification"]]
    assert report["html_report"] == {"name": "adult.report.html", "bytes": len(text.encode()),
                                     "checksum": "sha256:" + hashlib.sha256(text.encode()).hexdigest()}
    assert report == published.data
    assert_fetches_nothing(page, text)


def test_a_node_named_by_hand_says_whether_it_is_k_minimal(adult, adult_profile, tmp_path):
    answer = query(adult_profile, 5, 301)
    above = answer.lattice.successors(answer.preferred().vector)[0]  # satisfies, not k-minimal
    report = write_release(adult, above, tmp_path / "above.csv", criteria=Criteria.of(5), max_sup=301).data
    assert report["node"]["k_minimal"] is False is answer.node(above).k_minimal
    assert "not k-minimal" in report["decision"]["why"] and "not k-minimal" in html_path(tmp_path / "above.csv").read_text()


PAYLOADS = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "<svg onload=alert(3)>"]


def test_data_column_and_file_names_are_shown_as_text_never_as_markup(tmp_path):
    col, other = PAYLOADS[0], PAYLOADS[1]
    table = pd.DataFrame({col: ["a", "a", "b", "b", PAYLOADS[2]], "zip": ["94142", "94141", "94139", "94138", "94101"],
                          other: [PAYLOADS[0]] * 5})
    source = tmp_path / f"{PAYLOADS[1]}.csv"
    table.to_csv(source, index=False)
    levels = Hierarchy(col, tuple((v, PAYLOADS[2]) for v in ["a", "b", PAYLOADS[2]]))
    data = load_dataset(source, qi=[col, "zip"], hierarchies={col: levels, "zip": masking("zip", table["zip"], [1, 2])})
    out = tmp_path / f"{PAYLOADS[2]}.csv"
    write_release(data, (0, 1), out, criteria=Criteria.of(2), max_sup=1, output=OutputOptions(list_classes=10))
    text = html_path(out).read_text(encoding="utf-8")
    page = Page(text)
    assert_fetches_nothing(page, text)
    assert {e.tag for e in page.elements} <= {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3",
                                              "p", "section", "table", "thead", "tbody", "tr", "th", "td", "span",
                                              "strong", "code", "details", "summary", "svg", "rect", "text", "line",
                                              "circle"}
    body = page.all("body")[0].text
    assert all(p in body for p in PAYLOADS)  # shown as the data has them, as text
    assert PAYLOADS[2] in page.all("title")[0].text and PAYLOADS[1] in body  # the output's and the input's names
    assert PAYLOADS[2] in page.by_id("suppressed-classes").text  # a suppressed class's value, listed on request


def people():
    table = pd.DataFrame({"zip": ["94142", "94141", "94139", "94139", "94138", "94101"], "sex": list("FMMFMF")})
    return load_dataset(table, qi=["zip", "sex"], hierarchies={"zip": masking("zip", table["zip"], [1, 2]),
                                                              "sex": Hierarchy("sex", (("F", "*"), ("M", "*")))})


def tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_force_replaces_the_page_with_the_release_and_an_edited_page_is_never_overwritten(tmp_path):
    data, out = people(), tmp_path / "out.csv"
    write_release(data, (1, 1), out, criteria=Criteria.of(2), max_sup=2)
    with pytest.raises(OutputError, match="holds a previous release"):
        write_release(data, (1, 1), out, criteria=Criteria.of(2), max_sup=2)
    first = tree(tmp_path)
    report = write_release(data, (2, 1), out, criteria=Criteria.of(2), max_sup=2, output=OutputOptions(force=True)).data
    assert sorted(tree(tmp_path)) == ["out.csv", "out.report.html", "out.report.json"]
    assert tree(tmp_path)["out.report.html"] != first["out.report.html"]
    assert report["html_report"]["checksum"] == "sha256:" + hashlib.sha256(html_path(out).read_bytes()).hexdigest()
    assert "[2, 1]" in html_path(out).read_text()

    html_path(out).write_text(html_path(out).read_text() + "<!-- my notes -->")  # the user's now
    kept = tree(tmp_path)
    with pytest.raises(OutputError, match="out.report.html changed after microrelease wrote it"):
        write_release(data, (1, 1), out, criteria=Criteria.of(2), max_sup=2, output=OutputOptions(force=True))
    assert tree(tmp_path) == kept

    # a page without its report, or one its report does not name (a report older than pages): not ours
    report_path(out).unlink()
    out.unlink()
    with pytest.raises(OutputError, match="out.report.html exists and is not part of a release"):
        write_release(data, (1, 1), out, criteria=Criteria.of(2), max_sup=2, output=OutputOptions(force=True))
    old = {k: v for k, v in report.items() if k != "html_report"}
    report_path(out).write_text(json.dumps(old))
    with pytest.raises(OutputError, match="out.report.html is not named by the report"):
        write_release(data, (1, 1), out, criteria=Criteria.of(2), max_sup=2, output=OutputOptions(force=True))
    html_path(out).unlink()  # without the page, the older release is replaced as before
    assert write_release(data, (1, 1), out, criteria=Criteria.of(2), max_sup=2, output=OutputOptions(force=True)).data["node"]["vector"] == [1, 1]


@pytest.mark.parametrize("name", ["x.report.html", "report.html"])
def test_a_release_cannot_be_named_like_a_page(tmp_path, name):
    with pytest.raises(OutputError, match="cannot be named like a report"):
        file_target(tmp_path / name)


@pytest.mark.parametrize("failing", ["report", "render"])
def test_a_failure_while_publishing_leaves_no_page_behind(tmp_path, monkeypatch, failing):
    data, out = people(), tmp_path / "out.csv"
    write_release(data, (1, 1), out, criteria=Criteria.of(2), max_sup=2)
    before = tree(tmp_path)
    real = publish_module._write_synced

    def full_disk(path, text):
        if ".report.json.partial" in path.name:  # the page is written by then
            assert any(".report.html.partial" in p.name for p in path.parent.iterdir())
            raise OSError(28, "No space left on device", str(path))
        real(path, text)

    def broken(report, json_name):
        raise RuntimeError("a bug in the page")

    if failing == "report":
        monkeypatch.setattr(publish_module, "_write_synced", full_disk)
    else:
        monkeypatch.setattr(publish_module, "render_report", broken)
    with pytest.raises((OutputError, RuntimeError)):
        write_release(data, (2, 1), out, criteria=Criteria.of(2), max_sup=2, output=OutputOptions(force=True))
    assert tree(tmp_path) == before  # the previous release, page included, untouched; nothing else left
    with pytest.raises((OutputError, RuntimeError)):
        write_release(data, (2, 1), tmp_path / "new" / "fresh.csv", criteria=Criteria.of(2), max_sup=2)
    assert not (tmp_path / "new").exists()


def test_other_releases_get_a_page_of_their_parameters_counts_and_checks(tmp_path):
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"income": rng.normal(50, 10, 60).round(1), "age": rng.integers(20, 70, 60).astype(float)})
    micro = write_microaggregation(microaggregate(table, qi=["income", "age"], k=3), tmp_path / "m.csv").data
    dp = write_dp_release(dp_release(table, ["income"], bounds={"income": (0, 100)}, epsilon=1.0, method="record-noise"),
                          table, tmp_path / "dp.csv").data
    for name, report in (("m", micro), ("dp", dp)):
        text = html_path(tmp_path / f"{name}.csv").read_text()
        page = Page(text)
        assert_fetches_nothing(page, text)
        assert [r[0].text for r in page.table_rows("checks-table")] == [c["check"] for c in report["verification"]]
        assert report["parameters"]["method"] in page.by_id("decision").text
        assert report["html_report"]["checksum"] == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_a_folder_release_has_its_page_in_the_folder(tmp_path):
    from microrelease.core.sequential.pipeline import anonymize_sequential, write_sequential
    from microrelease.core.sequential.rt_data import load_sequential

    h = sample_data_folder("hospital")
    patients = pd.read_csv(h / "patients.csv", dtype=str).head(200)
    visits = pd.read_csv(h / "visits.csv", dtype=str)
    visits = visits[visits["patient_id"].isin(patients["patient_id"])]
    data = load_sequential(patients, visits, entity_id="patient_id", qi=["age", "sex", "zip"], sequence_key="visit_id",
                           order_by="day", code="code", code_hierarchy=h / "hospital_hierarchy_code.csv",
                           hierarchy_dir=h, identifiers=["name"])
    report = write_sequential(anonymize_sequential(data, 5), data, tmp_path / "out").data
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["audit.json", "entities.csv", "events.csv",
                                                                     "report.html", "report.json"]
    audit = json.loads((tmp_path / "out" / "audit.json").read_text())  # the original's figures: the steward's
    assert not {"losses", "attack"} & set(report) and {"losses", "attack"} <= set(audit)
    assert "checksum" not in json.dumps(report["input"]) and report["parameters"]["seeded"] is False
    text = (tmp_path / "out" / "report.html").read_text()
    page = Page(text)
    assert "entities.csv, events.csv" in page.all("title")[0].text
    assert [r[0].text for r in page.table_rows("checks-table")] == [c["check"] for c in report["verification"]]
    assert report["html_report"]["name"] == "report.html"


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_the_why_gives_the_figure_the_policy_chose_by(policy, samarati, tmp_path):
    answer = query(build_profile(samarati, quality=True), 2, 2)
    weights = {"ZIP": 3.0} if POLICIES[policy].uses_weights else None
    chosen = answer.preferred(policy, weights)
    spec = NodeRelease(samarati, chosen.vector, Criteria.of(2), 2, chosen_by=f"policy {policy}", policy=policy, weights=weights)
    decision = spec.write(tmp_path / "out.csv").data["decision"]
    index = np.array([answer.lattice.index(chosen.vector)])
    expected = POLICIES[policy].score(answer.lattice, answer.stats, index, weight_vector(answer.lattice, weights))[0]
    if policy in ("dm-star", "nu-entropy", "kl-divergence"):  # not published: they tell how the outliers cluster
        assert decision["score"] is None and policy in decision["why"]
        assert policy not in spec.write(tmp_path / "again.csv").data["metrics"]["quality"]
        return
    assert decision["score"] == pytest.approx(abs(expected))  # max-distribution scores -distinct: lower preferred
    assert policy in decision["why"] and f"{decision['score']:.6g}" in decision["why"]
    assert f"{decision['score']:.6g}" in html_path(tmp_path / "out.csv").read_text()


def test_the_suppressed_rows_are_split_by_reason_as_the_counts_are_made():
    from microrelease.core.release.report_html import rows_section

    counts = {"input_rows": 41, "released_rows": 40, "suppressed_rows": 1, "suppressed_by_reason": {
        "class_smaller_than_k": 1, "class_failing_a_privacy_model": 0, "by_model": {"0.5-closeness": 0}}}
    page = str(rows_section({"counts": counts}))
    assert "in classes smaller than k" in page and "in classes of k rows or more failing a privacy model" in page


@pytest.mark.parametrize("spec", ["0.5", "0.5:ordered"])
def test_a_suppressed_outlier_s_sensitive_value_does_not_change_the_report(tmp_path, capsys, spec):
    """Two inputs differing only in a suppressed outlier's two-valued sensitive value give the same file and
    the same report: a class smaller than k is counted under k, whatever model it also fails (an attack
    review read the outlier's value off the reason once)."""
    from microrelease.app.cli import main

    (tmp_path / "zip.csv").write_text("".join(f"{z};{z[:2]}***;*\n" for z in ("12000", "12001", "12002", "12003", "13000")))
    (tmp_path / "age.csv").write_text("".join(f"{a};{a // 10}0-{a // 10}9;*\n" for a in [*range(20, 40), 99]))
    rows = [(f"1200{i % 4}", str(20 + i % 20), d) for i, d in enumerate(["neg"] * 30 + ["pos"] * 10)]
    reports, files = [], []
    for value in ("pos", "neg"):
        data = tmp_path / f"{value}.csv"
        pd.DataFrame([*rows, ("13000", "99", value)], columns=["zip", "age", "diagnosis"]).to_csv(data, index=False)
        out = tmp_path / f"out_{value}.csv"
        code = main(["release", str(data), "--qi", "zip,age", "--hierarchy", f"zip={tmp_path / 'zip.csv'}",
                     "--hierarchy", f"age={tmp_path / 'age.csv'}", "--sensitive", "diagnosis", "--t-closeness", spec,
                     "--k", "5", "--max-sup", "1", "--node", "1,1", "--quiet", "-o", str(out)])
        assert code == 0, capsys.readouterr().err
        report = json.loads(out.with_name(f"out_{value}.report.json").read_text())
        assert report["counts"]["suppressed_rows"] == 1
        reports.append(report["counts"])
        files.append(sorted(out.read_text().splitlines()[1:]))
        page = out.with_name(f"out_{value}.report.html").read_text()
        assert "in classes smaller than k" in page
    assert files[0] == files[1]
    assert reports[0] == reports[1]
    assert reports[0]["suppressed_by_reason"]["class_smaller_than_k"] == 1
