"""A release report cannot contradict itself, lists every check done on the written file, and
counts the cells a spreadsheet would run as formulas."""

from __future__ import annotations

import hashlib
import json

import pandas as pd

from microrelease.app.cli import main


def test_one_set_of_counts_under_t_closeness(tmp_path, capsys):
    out = tmp_path / "out.csv"
    assert main(["release", "--sample", "adult", "--sensitive", "salary-class", "--t-closeness", "0.2:ordered",
                 "--k", "5", "--max-sup", "1%", "-o", str(out)]) == 0
    stdout = capsys.readouterr().out.strip().splitlines()
    report = json.loads((tmp_path / "out.report.json").read_text())
    counts = report["counts"]
    assert counts["suppressed_rows"] == 96 == report["metrics"]["suppressed"]
    assert counts["suppressed_by_reason"]["class_failing_a_privacy_model"] == 96
    assert sum(c["size"] for c in report["suppressed"]["classes"]) == 96
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(written) == counts["released_rows"] == counts["input_rows"] - 96 == report["output"]["rows"]
    assert report["parameters"]["privacy_models"] == ["0.2-closeness (ordered distance)"]
    checks = {c["check"]: c for c in report["verification"]}
    assert checks["0.2-closeness (ordered distance)"]["passed"] and checks["5-anonymity"]["passed"]
    assert checks["MaxSup"]["detail"].startswith("96 of 30162")
    assert stdout[-1].startswith("re-checked on the written file:") and "0.2-closeness" in stdout[-1]
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
