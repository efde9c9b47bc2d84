"""The release report a person reads (``OUT.report.html``), rendered from the report the JSON holds.

One source of truth: ``render_report`` reads only the report dict ``publishing``
writes as JSON (before the JSON gains the page's own checksum). A generalization gets the decision,
the class-size histogram of the released file, the re-identification risk, the utility per attribute
and the node's place in the lattice; microaggregation, DP and sequential releases get their
parameters, counts and figures; every release gets the checks run on the written file and its files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from microrelease.core.lattice.quality import QUALITY_MODELS
from microrelease.core.release.html import (
    Safe,
    height_svg,
    histogram_svg,
    join,
    levels_svg,
    number,
    page,
    pairs,
    section,
    table,
    tag,
)

HISTOGRAM_ROWS = 40  # up to this many class sizes, the histogram's table is shown in full

# Report keys shown as figures for each kind of release (all but a generalization's, drawn apart).
# (What was computed with the original data is in the data steward's audit, not on this page.)
FIGURES = {
    "microaggregation": ("groups",),
    "differential privacy": (),
    "relational + sequential": ("groups", "check"),
}


def render_report(report: Mapping, json_name: str) -> str:
    """The HTML page of ``report``; ``json_name`` is the JSON report's file name (it names this page)."""
    files = [f["name"] for f in report.get("output", {}).get("files", [])]
    tool = report.get("tool", {})
    kind = report.get("kind", "release")
    subtitle = f"{kind} release, written {report.get('created', '?')} by {tool.get('name')} {tool.get('version')}"
    if kind == "generalization":
        body = generalization_sections(report)
    else:
        body = [section("decision", "Parameters", facts(report.get("parameters", {}))),
                section("counts", "Counts", facts(report.get("counts", {}))),
                section("figures", "Figures", facts({k: report[k] for k in FIGURES.get(kind, ()) if k in report}))]
    return page(f"Release report: {', '.join(files)}", subtitle,
                [*body, verifications_section(report), files_section(report, json_name)])


def facts(mapping: Mapping) -> Safe:
    """A nested mapping as label/value rows (``a › b``); a list of records, or a mapping of records
    with the same fields (per attribute figures), as a table of its own; other lists inline."""
    rows: list[tuple[str, object]] = []
    tables: list[Safe] = []

    def walk(prefix: str, value: object) -> None:
        if prefix and is_records(value):
            # is_records: a list of mappings, or a mapping of them
            records = cast("list[Mapping]", list(value.values()) if isinstance(value, Mapping) else value)
            fields = list(dict.fromkeys(f for r in records for f in r))
            keys = list(value) if isinstance(value, Mapping) else []
            tables.append(tag("h3", prefix))
            tables.append(table([""] * bool(keys) + [label(f) for f in fields], (
                [*([key] if keys else []), *(inline(r.get(f)) for f in fields)]
                for key, r in zip(keys or [None] * len(records), records, strict=True))))
        elif isinstance(value, Mapping) and value:
            for key, item in value.items():
                walk(f"{prefix} › {label(key)}" if prefix else label(key), item)
        else:
            rows.append((prefix, inline(value)))

    walk("", mapping)
    return join([pairs(rows) if rows else Safe(""), *tables]) if rows or tables else tag("p", "none")


def is_records(value: object) -> bool:
    """A list of flat mappings, or a mapping of flat mappings with the same fields: a table's rows."""
    records = list(value.values()) if isinstance(value, Mapping) else value
    if not isinstance(records, list | tuple) or not records or not all(isinstance(r, Mapping) for r in records):
        return False
    flat = all(not isinstance(v, Mapping | list | tuple) for r in records for v in r.values())
    return flat and (not isinstance(value, Mapping) or len({tuple(r) for r in records}) == 1)


def inline(value: object) -> object:
    """A value for one cell: lists and mappings written out, empty ones as "none"."""
    if isinstance(value, Mapping):
        return ", ".join(f"{label(k)}: {inline(v)}" for k, v in value.items()) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(str(inline(v)) for v in value) or "none"
    return value


def label(key: object) -> str:
    """A key as the JSON has it: it may be a column name (``first_name`` must not read ``first name``)."""
    return str(key)


def named_levels(levels: Mapping[str, str]) -> str:
    return ", ".join(f"{qi}: {name}" for qi, name in levels.items())


def generalization_sections(r: Mapping) -> list[Safe]:
    sections = [decision_section(r), rows_section(r), classes_section(r), risk_section(r), utility_section(r),
                lattice_section(r)]
    if r.get("reference_distribution"):  # beside the rows: what the models' claim is measured against
        sections.insert(2, reference_section(r["reference_distribution"]))
    return sections


def exact(value: float) -> Safe:
    """A distance to 6 significant digits (4 could show 0.50004 as 0.5, beside t = 0.5)."""
    return tag("span", f"{value:.6g}", data_value=value)


def reference_section(ref: Mapping) -> Safe:
    """The distribution t-closeness is measured against (the input's, before suppression), and the
    worst class against it and against the released file's own; its counts only when the report
    publishes them (minus the file's they give the suppressed rows' sensitive values)."""
    about = [("Distribution", ref.get("description", ref.get("distribution"))), ("Sensitive attribute", ref["attribute"]),
             ("Order (as the EMD reads the values)", ref.get("order"))]
    parts = []
    if "counts" in ref:
        total = ref.get("total") or 0
        about.append(("Total rows", total))
        parts.append(table(["value", "count in the input", "share"],
                           ((v, n, f"{number(100 * n / total if total else 0.0)} %")
                            for v, n in zip(ref["values"], ref["counts"], strict=True)), id="reference-counts"))
    else:
        about.append(("Counts", "not published"))
    worst = table(["model", "classes", "worst class against this distribution (verified when written)",
                   "worst class against the released file's own", "classes over t against the file's own"],
                  ((m, f["classes"], _input_figure(f), exact(f["worst_vs_released_file"]),
                    f["failing_vs_released_file"]) for m, f in ref.get("models", {}).items()), id="reference-worst")
    return section("reference", "Reference distribution", pairs(about), tag("p", ref.get("note", ""), class_="note"),
                   *parts, worst)


def _input_figure(figures: Mapping) -> object:
    worst = figures.get("worst_vs_reference")
    return exact(worst) if worst is not None else f"{figures.get('failing_vs_reference')} classes over t (figure unpublished)"


def decision_section(r: Mapping) -> Safe:
    p, node, decision, n = r["parameters"], r["node"], r.get("decision", {}), r["counts"]["input_rows"]
    max_sup = p.get("max_sup")
    rows = [("Node", tag("span", named_levels(node["levels"]), id="node-named")),
            ("Vector (levels in QI order)", str(node["vector"])),
            ("k", tag("span", p["k"], id="param-k")),
            ("MaxSup", tag("span", "not bounded" if max_sup is None else
                           f"{number(max_sup)} rows ({number(100 * max_sup / n if n else 0.0)} % of {number(n)})",
                           id="param-max-sup", data_value=max_sup)),
            ("Quasi-identifiers", ", ".join(p["qi"])),
            ("Identifiers dropped", ", ".join(p["identifiers_dropped"]) or "none"),
            ("Privacy models", tag("span", privacy_models(p), id="param-models")),
            ("Chosen by", p.get("chosen_by")),
            ("Policy", f"{p['policy']}: {decision.get('policy_rule', '')}" if p.get("policy") else "none"),
            ]
    if p.get("weights"):
        rows.append(("Weights", ", ".join(f"{q}: {number(w)}" for q, w in p["weights"].items())))
    return section("decision", "Decision", pairs(rows), tag("p", tag("strong", "Why this node: "), decision.get("why", ""),
                                                          id="why"))


def privacy_models(p: Mapping) -> str:
    """The models the release meets besides k: l-diversity / t-closeness on the sensitive attribute, and
    k-map against its population table (``parameters.k_map``: criterion, population name and rows)."""
    parts = [", ".join(p["privacy_models"]) + " on " + ", ".join(p["sensitive"])] if p.get("privacy_models") else []
    k_map = p.get("k_map")
    if k_map:
        population = k_map["population"]
        parts.append(f"{k_map['criterion']} against the population {population['name']} "
                     f"({number(population['rows'])} rows)")
    return "; ".join(parts) or "none (k-anonymity only)"


def rows_section(r: Mapping) -> Safe:
    c = r["counts"]
    why = c["suppressed_by_reason"]
    rows = [("Input rows", c["input_rows"]), ("Released rows", c["released_rows"]),
            ("Suppressed rows", c["suppressed_rows"]), ("… in classes smaller than k", why["class_smaller_than_k"]),
            ("… in classes of k rows or more failing a privacy model", why["class_failing_a_privacy_model"]),
            *((f"… failing {m}", v) for m, v in why["by_model"].items())]
    listed = r.get("suppressed", {})
    body = [pairs(rows)]
    if listed.get("classes"):
        body.append(tag("p", listed.get("note", ""), class_="note"))
        columns = list(listed["classes"][0])
        body.append(table([label(c) for c in columns], ([cls[c] for c in columns] for cls in listed["classes"]),
                          id="suppressed-classes"))
    elif listed.get("classes_total"):
        total = listed["classes_total"]
        body.append(tag("p", f"{number(total)} class{'es were' if total != 1 else ' was'} suppressed; not listed "
                             "(a listing singles out the input's outliers)."))
    return section("rows", "Rows released and suppressed", *body)


def classes_section(r: Mapping) -> Safe:
    classes = r.get("classes", {})
    bars = [tuple(b) for b in classes.get("histogram", [])]
    summary = (f"{number(classes.get('count', 0))} equivalence classes in the released file "
               f"({number(classes.get('rows', 0))} rows), sizes {number(classes.get('smallest', 0))} to "
               f"{number(classes.get('largest', 0))}; counted on the file as read back.")
    listing = table(["class size (rows)", "classes", "rows"], ((s, c, s * c) for s, c in bars), id="histogram-table")
    # a long listing folds away on screen (printed, a closed <details> would hide it: the JSON has it all)
    detail = tag("details", tag("summary", f"The histogram as a table ({len(bars)} sizes)"), listing) \
        if len(bars) > HISTOGRAM_ROWS else listing
    return section("classes", "Class sizes", tag("p", summary), histogram_svg(bars), detail)


def risk_section(r: Mapping) -> Safe:
    risk = r.get("risk", {})
    highest, average = risk.get("highest"), risk.get("average_prosecutor")
    smallest = r.get("classes", {}).get("smallest")
    rows: list[tuple[str, object]] = [("Highest re-identification risk (1 / smallest class)",
             tag("span", f"{number(highest)} (1 in {number(smallest)})" if smallest else highest, id="risk-highest",
                 data_value=highest)),
            ("Average prosecutor risk (classes / released rows)", tag("span", average, id="risk-average",
                                                                      data_value=average))]
    for t in risk.get("records_in_small_classes", []):
        rows.append((f"Records in classes of fewer than {t['below']} rows (risk over 1/{t['below']})",
                     tag("span", f"{number(t['records'])} ({number(100 * t['share'])} %)", class_="risk-below",
                         data_below=t["below"], data_records=t["records"], data_share=t["share"])))
    population = risk.get("population")
    if population:  # the data as a sample of its population (release --sampling-fraction)
        share, count = population["uniques_share"], population["uniques"]
        rows.append((f"Population uniques, estimated ({population['uniqueness_model']}; sampling fraction "
                     f"{number(population['sampling_fraction'])})",
                     "no estimate" if share is None else tag(
                         "span", f"{number(100 * share)} % of the population (about {number(round(count))} people)",
                         id="risk-uniques", data_value=share)))
    return section("risk", "Re-identification risk (from the released file)", pairs(rows))


QUALITY_LABELS = {name: q.label for name, q in QUALITY_MODELS.items()}


def utility_section(r: Mapping) -> Safe:
    rows = [(u["qi"], u["level"], u["height"], u["level_name"], u["input_distinct"], u["released_distinct"],
             tag("span", f"{number(100 * u['share_kept'])} %", data_value=u["share_kept"]))
            for u in r.get("utility", [])]
    m = r.get("metrics", {})
    overall = [(name, m[key]) for key, name in (
        ("accuracy", "Accuracy (1 − mean of level/height)"), ("completeness", "Completeness (rows released)"),
        ("distinct", "Released classes"), ("avg_class_size", "Average class size"),
        ("discernibility", "Discernibility")) if key in m]
    # ARX's quality models (lower is better), named as the policies' registry names them
    overall += [(f"{QUALITY_LABELS.get(name, name)} (lower is better)", value)
                for name, value in m.get("quality", {}).items()]
    return section("utility", "Utility per attribute",
                   table(["QI", "level", "of height", "level name", "distinct values in the input",
                          "distinct values released", "share kept"], rows, id="utility-table"),
                   pairs(overall))


def lattice_section(r: Mapping) -> Safe:
    node = r["node"]
    levels = [(u["qi"], u["level"], u["height"], u["level_name"]) for u in r.get("utility", [])]
    minimal = node.get("k_minimal")
    said = {True: "It is k-minimal: no node below it satisfies the question", False: "It is not k-minimal",
            None: "Whether it is k-minimal was not determined"}[minimal]
    text = (f"Height {number(node.get('height', 0))} of {number(node.get('max_height', 0))}. {said} "
            f"({node.get('k_minimal_detail', '')}).")
    return section("lattice", "Position in the lattice", tag("p", text, id="k-minimal", data_value=minimal),
                   height_svg(node.get("height", 0), node.get("max_height", 0)), levels_svg(levels))


def verifications_section(r: Mapping) -> Safe:
    rows = [(c["check"], tag("span", "passed" if c["passed"] else "FAILED", class_="pass" if c["passed"] else "fail"),
             c["detail"]) for c in r.get("verification", [])]
    body = [tag("p", "Each claim was checked on the written file, read back before it was put in place."),
            table(["check", "result", "detail"], rows, id="checks-table")]
    formulas = r.get("formula_cells")
    if formulas:
        body.append(tag("p", f"Cells a spreadsheet would run as formulas: {number(formulas['unescaped'])} unescaped, "
                             f"{number(formulas['escaped'])} escaped"
                             + (f" ({', '.join(formulas['by_column'])})" if formulas["by_column"] else "") + "."))
    return section("checks", "Checks run on the file", *body)


def files_section(r: Mapping, json_name: str) -> Safe:
    inputs = r.get("input", [])
    inputs = [inputs] if isinstance(inputs, Mapping) else inputs
    out = r.get("output", {}).get("files", [])
    return section("files", "Files",
                   table(["input", "rows", "SHA-256"], ((i.get("name"), i.get("rows"), i.get("checksum")) for i in inputs)),
                   table(["released file", "bytes", "SHA-256"], ((f["name"], f["bytes"], f["checksum"]) for f in out)),
                   tag("p", "The machine-readable report ", tag("code", json_name),
                       " holds the same figures and names this page with its SHA-256."),
                   join([tag("p", "The data steward's audit ", tag("code", r["audit_report"]["name"]),
                             " (not for publication) holds the figures computed with the original data.")]
                        if "audit_report" in r else []),
                   join([tag("p", "Row order: ", r["output"]["row_order"])] if "row_order" in r.get("output", {}) else []))
