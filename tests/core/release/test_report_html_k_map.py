"""The report page names k-map among the privacy models, from the JSON report's ``parameters.k_map``."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from microrelease.core import Criteria, load_sample, read_table
from microrelease.core.data.samples import sample
from microrelease.core.lattice.node_release import NodeRelease
from microrelease.core.release.report_html import render_report
from microrelease.core.risk.k_map import KMap, code_population


class SpanText(HTMLParser):
    """The text of the element with id ``wanted``."""

    def __init__(self, wanted: str):
        super().__init__()
        self.wanted, self.depth, self.text = wanted, 0, ""

    def handle_starttag(self, tag, attrs):
        if self.depth or dict(attrs).get("id") == self.wanted:
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.text += data


def models_row(html: str) -> str:
    parser = SpanText("param-models")
    parser.feed(html)
    return parser.text


def test_a_k_map_release_names_its_criterion_and_population(tmp_path):
    s = sample("adult-sample")
    data = load_sample("adult-sample")
    population = code_population(read_table(s.population_path, sep=None), data, source=str(s.population_path))
    node = (0, 2, 1, 1, 2, 2, 2, 1)
    NodeRelease(data, node, Criteria.of(1, KMap(5, population)), None).write(tmp_path / "r.csv")
    report = json.loads((tmp_path / "r.report.json").read_text())
    page = (tmp_path / "r.report.html").read_text()
    rows = report["parameters"]["k_map"]["population"]["rows"]
    assert rows == len(read_table(s.population_path, sep=None))
    assert models_row(page) == f"5-map against the population adult.csv ({rows:,} rows)"
    assert models_row(render_report(report, "r.report.json")) == models_row(page)


def test_without_models_the_row_says_k_anonymity_only(tmp_path):
    data = load_sample("toy")
    NodeRelease(data, (1,) * len(data.quasi_identifiers), Criteria.of(1), None).write(tmp_path / "r.csv")
    assert models_row((tmp_path / "r.report.html").read_text()) == "none (k-anonymity only)"
