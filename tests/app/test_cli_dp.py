"""``microrelease dp``: the ratio-closeness route checked from the written file, linked records only on
request with the weaker guarantee said, and flags of one method refused with the other."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from microrelease.app.cli import main
from microrelease.core.data.samples import microdata_sample

CENSUS = microdata_sample("census")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_ratio_closeness_route_holds_on_the_written_file(tmp_path, capsys):
    out = tmp_path / "r.csv"
    code, printed, err = run(capsys, "dp", "--sample", "census", "--method", "ratio-closeness", "--confidential",
                             "PEARNVAL", "--epsilon", "1", "--k", "5", "-o", str(out))
    assert code == 0, err
    written = pd.read_csv(out)
    assert list(written.columns) == [*CENSUS.qi, "PEARNVAL"]  # AFNLWGT and the other attributes not released
    original = pd.read_csv(CENSUS.path)
    assert sorted(written["PEARNVAL"]) == sorted(original["PEARNVAL"])  # true values
    # independently of the tool: classes are the rows sharing their QIs; bins the declared 4 over (0, 1e5)
    classes = written.groupby(list(CENSUS.qi)).ngroup()
    bins = np.minimum(written["PEARNVAL"].clip(0, 1e5) // 25_000, 3)  # [0, 25000), ..., [75000, 100000]
    shares = pd.crosstab(classes, bins, normalize="index")
    table = bins.value_counts(normalize=True)[shares.columns]
    present = table > 0
    epsilon = 2 * float(np.abs(np.log(shares.loc[:, present] / table[present])).to_numpy().max())
    assert classes.value_counts().min() >= 5 and epsilon <= 1 + 1e-9
    report = json.loads((tmp_path / "r.report.json").read_text())
    assert abs(report["file"]["epsilon_on_declared_bins"] - epsilon) < 1e-9
    assert report["file"]["classes"] == classes.nunique() and "read from the file" in printed
    assert "on those bins only, not of the file" in report["parameters"]["guarantee"]
    assert report["parameters"]["not_released"] == ["AFNLWGT", *CENSUS.confidential[:2], *CENSUS.confidential[3:]]
    assert "qi_sse_sst_percent" not in report and "qi_sse_sst_percent" in json.loads(
        (tmp_path / "r.audit.json").read_text())


def test_t_closeness_is_pointed_to_the_ratio_route_and_flags_of_the_other_methods_are_refused(tmp_path, capsys):
    out = str(tmp_path / "x.csv")
    code, _, err = run(capsys, "dp", "--sample", "census", "--method", "t-closeness", "--epsilon", "1", "-o", out)
    assert code == 2 and "its multiplicative form, the route to DP, is ratio-closeness" in err
    cases = [(["--method", "ratio-closeness", "--confidential", "PEARNVAL", "--attrs", "AGI"], "--attrs is not used"),
             (["--method", "ratio-closeness", "--confidential", "PEARNVAL", "--seed", "1"], "--seed is not used"),
             (["--method", "ratio-closeness"], "needs --qi (or a sample's) and --confidential"),
             (["--method", "ir-mdav", "--confidential", "PEARNVAL"], "--confidential is for --method ratio-closeness"),
             (["--method", "ratio-closeness", "--confidential", "PEARNVAL", "--cuts", "1,x"], "--cuts expects numbers")]
    for extra, message in cases:
        code, _, err = run(capsys, "dp", "--sample", "census", "--epsilon", "1", "--k", "5", *extra, "-o", out)
        assert code == 2 and message in err, (extra, err)
    assert not (tmp_path / "x.csv").exists()


def test_linked_records_only_on_request_with_the_weaker_guarantee_said(tmp_path, capsys):
    data = tmp_path / "d.csv"
    pd.DataFrame({"A": [0, .1, .9, 1] * 5, "B": [0, .9, .1, 1] * 5}).to_csv(data, index=False)
    common = ["dp", str(data), "--attrs", "A,B", "--bounds", "A=0:1,B=0:1", "--epsilon", "1", "--method", "ir-mdav",
              "--k", "2"]
    code, printed, err = run(capsys, *common, "-o", str(tmp_path / "u.csv"))
    assert code == 0, err
    report = json.loads((tmp_path / "u.report.json").read_text())
    assert report["parameters"]["records_linked"] is False and "records do not link attributes" in printed
    code, printed, err = run(capsys, *common, "--linked-records", "-o", str(tmp_path / "l.csv"))
    assert code == 0 and "not epsilon-DP as a whole" in err
    report = json.loads((tmp_path / "l.report.json").read_text())
    assert report["parameters"]["records_linked"] is True and "is NOT 1-DP" in report["parameters"]["guarantee"]


def test_dp_takes_quiet_as_every_command_does_and_draws_its_bar_on_a_terminal(tmp_path, capsys, monkeypatch):
    import io

    argv = ["dp", str(microdata_sample("eia").path), "--attrs", "RESSALES", "--bounds", "RESSALES=0:10000000",
            "--epsilon", "1", "--method", "record-noise", "-o", str(tmp_path / "o.csv")]

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for quiet in (True, False):
        terminal = Terminal()
        monkeypatch.setattr("sys.stderr", terminal)
        assert main([*argv, "--force", *(["--quiet"] if quiet else [])]) == 0
        drawn = terminal.getvalue()
        assert ("100%" in drawn) is not quiet and ("33%" in drawn) is not quiet
