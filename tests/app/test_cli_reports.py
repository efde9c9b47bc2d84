"""A release report cannot contradict itself, lists every check done on the written file, and
counts the cells a spreadsheet would run as formulas."""

from __future__ import annotations

import csv
import hashlib
import json

import pandas as pd

from microrelease.app.cli import main


def test_one_set_of_counts_under_t_closeness(tmp_path, capsys):
    out = tmp_path / "out.csv"
    assert main(["release", "--sample", "adult", "--sensitive", "salary-class", "--t-closeness", "0.2:ordered",
                 "--k", "5", "--max-sup", "1%", "--list-suppressed", "500", "-o", str(out)]) == 0
    stdout = capsys.readouterr().out.strip().splitlines()
    report = json.loads((tmp_path / "out.report.json").read_text())
    counts = report["counts"]
    assert counts["suppressed_rows"] == 96 == report["metrics"]["suppressed"]
    assert sum(c["size"] for c in report["suppressed"]["classes"]) == 96
    # a class smaller than k is counted under k, whatever model it also fails
    small = sum(c["size"] for c in report["suppressed"]["classes"] if c["size"] < 5)
    why = counts["suppressed_by_reason"]
    assert why["class_smaller_than_k"] == small and why["class_failing_a_privacy_model"] == 96 - small > 0
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(written) == counts["released_rows"] == counts["input_rows"] - 96 == report["output"]["rows"]
    assert report["parameters"]["privacy_models"] == ["0.2-closeness (ordered distance)"]
    checks = {c["check"]: c for c in report["verification"]}
    assert checks["0.2-closeness (ordered distance)"]["passed"] and checks["5-anonymity"]["passed"]
    assert checks["MaxSup"]["detail"].startswith("96 of 30162")
    assert stdout[-1].startswith("re-checked on the written file:") and "0.2-closeness" in stdout[-1]
    figures = report["reference_distribution"]["models"]["0.2-closeness (ordered distance)"]
    assert figures["worst_vs_reference"] is None  # with the file it would give the input's counts
    assert stdout[-1].endswith(f"; 0.2-closeness (ordered distance): 0 of {figures['classes']} classes over t against "
                               "the input's distribution (its worst figure unpublished), worst class "
                               f"{figures['worst_vs_released_file']:.6g} against the released file's own "
                               f"({figures['failing_vs_released_file']} of {figures['classes']} classes over t against "
                               "it)")
    assert "counts" not in report["reference_distribution"]  # not published without --publish-reference
    assert "96 suppressed" in stdout[0]
    assert report["output"]["files"][0] == {"name": "out.csv", "bytes": out.stat().st_size,
                                            "checksum": "sha256:" + hashlib.sha256(out.read_bytes()).hexdigest()}
    assert str(tmp_path) not in json.dumps(report)  # file names only, no paths of this machine


def formula_table(tmp_path):
    data = tmp_path / "people.csv"
    pd.DataFrame({"zip": ["94142", "94141", "94139", "94138"], "note": ["=HYPERLINK(\"x\")", "-5", "+1e3", "@SUM(A1)"],
                  "other": ["fine", "-x", "ok", "\tcmd"]}).to_csv(data, index=False)
    h = tmp_path / "zip.csv"
    h.write_text("\n".join(f"{z};941**;*" for z in ["94142", "94141", "94139", "94138"]) + "\n")
    return ["release", str(data), "--qi", "zip", "--hierarchy", f"zip={h}", "--k", "2", "--node", "1"]


def test_formula_cells_are_counted_warned_and_escaped_on_request(tmp_path, capsys):
    base = formula_table(tmp_path)
    assert main([*base, "-o", str(tmp_path / "plain.csv")]) == 0
    err = capsys.readouterr().err
    assert "warning: 4 released cell(s)" in err and "--escape-formulas" in err and err.count("\n") == 1
    report = json.loads((tmp_path / "plain.report.json").read_text())
    assert report["formula_cells"]["unescaped"] == 4  # "-5" and "+1e3" are numbers, not formulas
    assert report["formula_cells"]["by_column"] == {"note": {"unescaped": 2, "escaped": 0},
                                                    "other": {"unescaped": 2, "escaped": 0}}
    for engine in ("duckdb", "pandas"):
        out = tmp_path / f"escaped_{engine}.csv"
        assert main([*base, "--engine", engine, "--escape-formulas", "-o", str(out)]) == 0
        assert "warning" not in capsys.readouterr().err
        report = json.loads((tmp_path / f"escaped_{engine}.report.json").read_text())
        assert report["formula_cells"] | {"by_column": None} == {"escape_formulas": True, "unescaped": 0, "escaped": 4,
                                                                 "by_column": None}
        written = pd.read_csv(out, dtype=str, keep_default_na=False)
        assert sorted(written["note"]) == sorted(["'=HYPERLINK(\"x\")", "-5", "+1e3", "'@SUM(A1)"])
        assert sorted(written["other"]) == sorted(["fine", "'-x", "ok", "'\tcmd"])


def test_escaped_releases_pass_their_own_checks_for_every_method(tmp_path, capsys):
    data = tmp_path / "d.csv"
    pd.DataFrame({"age": [30, 31, 32, 40, 41, 42], "zip": [1, 2, 3, 4, 5, 6], "income": [10, 20, 30, 40, 50, 60],
                  "note": ["=cmd", "ok", "@x", "fine", "-y", "+z"]}).to_csv(data, index=False)
    runs = {
        "micro.csv": ["microaggregate", str(data), "--qi", "age,zip", "--k", "3", "--method", "mdav-id"],
        "swap.csv": ["microaggregate", str(data), "--qi", "age,zip", "--k", "3", "--method", "mdav-swap"],
        "dp.csv": ["dp", str(data), "--attrs", "income", "--bounds", "income=0:100", "--epsilon", "1",
                   "--method", "record-noise", "--keep", "note"],
    }
    for out, argv in runs.items():
        assert main([*argv, "--escape-formulas", "-o", str(tmp_path / out)]) == 0, capsys.readouterr().err
        written = pd.read_csv(tmp_path / out, dtype=str, keep_default_na=False)
        assert sorted(written["note"]) == sorted(["'=cmd", "ok", "'@x", "fine", "'-y", "'+z"])
    capsys.readouterr()


def test_escaped_sensitive_values_still_pass_the_models(tmp_path, capsys):
    data = tmp_path / "d.csv"
    pd.DataFrame({"zip": ["94142", "94141", "94139", "94138"] * 2,
                  "diag": ["=flu", "cold", "@a", "b", "cold", "=flu", "b", "@a"]}).to_csv(data, index=False)
    h = tmp_path / "zip.csv"
    h.write_text("\n".join(f"{z};{z[:4]}*;*" for z in ["94142", "94141", "94139", "94138"]) + "\n")
    out = tmp_path / "out.csv"
    assert main(["release", str(data), "--qi", "zip", "--hierarchy", f"zip={h}", "--sensitive", "diag",
                 "--l-diversity", "distinct:2", "--k", "2", "--node", "1", "--escape-formulas", "-o", str(out)]) == 0
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert {c["check"]: c["passed"] for c in report["verification"]}["distinct 2-diversity"]
    assert report["formula_cells"]["escaped"] == 4
    capsys.readouterr()


def test_a_formula_column_name_is_counted_and_refused_when_escaping(tmp_path, capsys):
    data = tmp_path / "d.csv"
    pd.DataFrame({"zip": ["94142", "94141"] * 2, '=HYPERLINK("x")': ["a", "b", "c", "d"]}).to_csv(data, index=False)
    h = tmp_path / "zip.csv"
    h.write_text("94142;9414*;*\n94141;9414*;*\n")
    base = ["release", str(data), "--qi", "zip", "--hierarchy", f"zip={h}", "--k", "2", "--node", "1"]
    assert main([*base, "-o", str(tmp_path / "plain.csv")]) == 0
    report = json.loads((tmp_path / "plain.report.json").read_text())
    assert report["formula_cells"]["by_column"] == {'<header> =HYPERLINK("x")': {"unescaped": 1, "escaped": 0}}
    assert "warning: 1 released cell(s)" in capsys.readouterr().err
    assert main([*base, "--escape-formulas", "-o", str(tmp_path / "escaped.csv")]) == 2
    assert "would run as formulas in a spreadsheet; rename them" in capsys.readouterr().err
    assert not (tmp_path / "escaped.csv").exists()


def test_a_carriage_return_inside_a_cell_survives_the_pandas_writers(tmp_path, capsys):
    data = tmp_path / "d.csv"
    pd.DataFrame({"zip": ["94142", "94141"] * 2, "age": [30, 31, 32, 33],
                  "note": ["a\rb", "x", "y\r\nz", "w"]}).to_csv(data, index=False, quoting=csv.QUOTE_ALL)
    h = tmp_path / "zip.csv"
    h.write_text("94142;9414*;*\n94141;9414*;*\n")
    assert main(["release", str(data), "--qi", "zip", "--hierarchy", f"zip={h}", "--k", "2", "--node", "1",
                 "--engine", "pandas", "-o", str(tmp_path / "r.csv")]) == 0
    assert main(["microaggregate", str(data), "--qi", "age", "--k", "2", "-o", str(tmp_path / "m.csv")]) == 0
    for out in ("r.csv", "m.csv"):
        written = pd.read_csv(tmp_path / out, dtype=str, keep_default_na=False)
        assert sorted(written["note"]) == sorted(["a\rb", "x", "y\r\nz", "w"])
    capsys.readouterr()


def test_duckdb_writes_a_release_where_every_row_is_suppressed(tmp_path, capsys):
    out = tmp_path / "none.csv"
    assert main(["release", "--sample", "toy", "--k", "2", "--node", "0,0,0", "--max-sup", "7", "-o", str(out)]) == 0
    report = json.loads((tmp_path / "none.report.json").read_text())
    assert report["counts"]["released_rows"] == 0 and report["counts"]["suppressed_rows"] == 7
    assert pd.read_csv(out).empty
    capsys.readouterr()


def test_a_tiny_epsilon_gives_a_strict_json_report_and_a_one_line_summary(tmp_path, capsys):
    out = tmp_path / "dp.csv"
    code = main(["dp", "--sample", "census", "--attrs", "AGI", "--epsilon", "1e-300", "--method", "record-noise",
                 "-o", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "SSE/SST inf %" in printed

    def refuse(constant):
        raise AssertionError(f"non-JSON constant {constant} in the report")

    json.loads((tmp_path / "dp.report.json").read_text(), parse_constant=refuse)
    audit = json.loads((tmp_path / "dp.audit.json").read_text(), parse_constant=refuse)
    assert audit["information_loss"]["sse_sst_percent"] == "inf"


def test_every_writing_command_names_its_page_and_the_page_is_there(tmp_path, capsys):
    data = tmp_path / "d.csv"
    pd.DataFrame({"age": [30, 31, 32, 40, 41, 42], "zip": [1, 2, 3, 4, 5, 6],
                  "income": [10, 20, 30, 40, 50, 60]}).to_csv(data, index=False)
    runs = {
        "out.csv": ["release", "--sample", "samarati", "--k", "2", "--max-sup", "2"],
        "micro.csv": ["microaggregate", str(data), "--qi", "age,zip", "--k", "3", "--method", "mdav-id"],
        "dp.csv": ["dp", str(data), "--attrs", "income", "--bounds", "income=0:100", "--epsilon", "1",
                   "--method", "record-noise"],
    }
    for out, argv in runs.items():
        capsys.readouterr()
        assert main([*argv, "-o", str(tmp_path / out)]) == 0, capsys.readouterr().err
        page = tmp_path / out.replace(".csv", ".report.html")
        report = json.loads((tmp_path / out.replace(".csv", ".report.json")).read_text())
        assert f"to read and print: {page}" in capsys.readouterr().out
        assert report["html_report"]["checksum"] == "sha256:" + hashlib.sha256(page.read_bytes()).hexdigest()


def test_publish_reference_adds_the_input_counts_and_warns_what_they_disclose(tmp_path, capsys):
    # 40 rows and one outlier (13000, 99, HIV), suppressed at k = 5: the counts minus the file's are its diagnosis
    rows = [(f"1200{i % 4}", str(20 + i % 20), d) for i, d in enumerate(["cancer"] * 15 + ["cold"] * 18 + ["flu"] * 7)]
    data = tmp_path / "patients.csv"
    pd.DataFrame([*rows, ("13000", "99", "HIV")], columns=["zip", "age", "diagnosis"]).to_csv(data, index=False)
    (tmp_path / "zip.csv").write_text("".join(f"{z};{z[:2]}***;*\n" for z in ("12000", "12001", "12002", "12003",
                                                                            "13000")))
    (tmp_path / "age.csv").write_text("".join(f"{a};{a // 10}0-{a // 10}9;*\n" for a in [*range(20, 40), 99]))
    base = ["release", str(data), "--qi", "zip,age", "--hierarchy", f"zip={tmp_path / 'zip.csv'}", "--hierarchy",
            f"age={tmp_path / 'age.csv'}", "--sensitive", "diagnosis", "--t-closeness", "1", "--k", "5",
            "--max-sup", "1", "--node", "2,1", "--quiet"]
    assert main([*base, "-o", str(tmp_path / "plain.csv")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert "HIV" not in (tmp_path / "plain.report.json").read_text() + (tmp_path / "plain.report.html").read_text()
    assert main([*base, "--publish-reference", "-o", str(tmp_path / "counts.csv")]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("microrelease: warning: the report publishes the input's counts")
    assert "--publish-reference" in err and "sensitive values of the 1 suppressed row(s)" in err
    ref = json.loads((tmp_path / "counts.report.json").read_text())["reference_distribution"]
    assert (ref["values"], ref["counts"]) == (["HIV", "cancer", "cold", "flu"], [1, 15, 18, 7])
    assert "HIV" in (tmp_path / "counts.report.html").read_text() and "HIV" not in (tmp_path / "counts.csv").read_text()
