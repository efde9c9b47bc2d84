"""Two reports: the publishable OUT.report.json holds nothing computed from the original values; the
data steward's OUT.audit.json holds those figures, named by the report with a keyed MAC (never a
plain checksum, against which anyone could test guesses), and is never overwritten once edited."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from microrelease.core import Criteria, Hierarchy, OutputOptions, load_dataset, write_release
from microrelease.core.dp.dp_writing import write_dp_release
from microrelease.core.dp.microdata import PrivacyWarning, dp_release
from microrelease.core.exceptions import OutputError
from microrelease.core.micro.micro_release import write_microaggregation
from microrelease.core.micro.microaggregation import microaggregate
from microrelease.core.release import audit_path, report_path
from microrelease.core.release.target import audit_mac

# Keys of a report that differ between two writes of the same decision whatever the data: when it was
# written, and the checksums of the written (noisy) files and of the page and audit that name them.
PER_WRITE = ("created", "html_report", "audit_report")


def table(first: float) -> pd.DataFrame:
    """Ten people; the neighbouring table changes the first person's values only (here: out of bounds)."""
    a = np.array([first, 20, 30, 40, 50, 60, 70, 80, 90, 95], dtype=float)
    return pd.DataFrame({"name": [f"p{i}" for i in range(10)], "A": a, "B": a[::-1] / 2})


def publishable(report: dict) -> dict:
    out = {k: v for k, v in report.items() if k not in PER_WRITE}
    out["output"] = {k: v for k, v in report["output"].items() if k != "files"}
    return out


@pytest.mark.parametrize(("method", "k"), [("record-noise", None), ("fixed-order-blocks", 5), ("ir-mdav", 2)])
def test_the_publishable_dp_report_is_the_same_for_neighbouring_tables(method, k, tmp_path):
    reports, audits = [], []
    for i, first in enumerate((10.0, 250.0)):  # 250 is clamped to the bound 100: a count of the original
        data = table(first)
        with pytest.warns(PrivacyWarning) if first > 100 else _none():
            release = dp_release(data, ["A", "B"], bounds={"A": (0, 100), "B": (0, 100)}, epsilon=1.0, method=method,
                                 k=k, identifiers=["name"])
        out = tmp_path / f"t{i}.csv"
        published = write_dp_release(release, data, out, identifiers=["name"], warnings_raised=["w"] * i)
        reports.append(publishable(published.data))
        audits.append(json.loads(audit_path(out).read_text()))
    assert reports[0] == reports[1]
    text = json.dumps(reports[0])
    assert "mean_original" not in text and "checksum" not in text and "clamped" not in text
    # the steward's figures are in the audit, and they differ
    assert audits[0]["values_clamped"] == {} and audits[1]["values_clamped"] == {"A": 1, "B": 1}
    assert audits[0]["information_loss"]["moments"][0]["mean_original"] != audits[1]["information_loss"]["moments"][0][
        "mean_original"]
    assert audits[0]["input"]["checksum"] != audits[1]["input"]["checksum"] and audits[1]["warnings"] == ["w"]


class _none:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_microaggregation_report_leaves_the_originals_figures_to_the_audit(tmp_path):
    data = table(10.0)
    result = microaggregate(data, qi=["A"], confidential=["B"], k=3, method="mdav-swap", identifiers=["name"], rng=5)
    published = write_microaggregation(result, tmp_path / "m.csv", identifiers=["name"])
    report, audit = published.data, json.loads(audit_path(tmp_path / "m.csv").read_text())
    assert not {"information_loss", "linkage_risk"} & set(report) and "checksum" not in report["input"]
    assert {"information_loss", "linkage_risk"} <= set(audit) and audit["input"]["checksum"].startswith("sha256:")
    assert report["parameters"]["seeded"] is True and audit["seeded"] is True
    assert published.audit["information_loss"] == audit["information_loss"]


def test_the_report_names_its_audit_by_a_keyed_mac_only(tmp_path):
    data = table(10.0)
    release = dp_release(data, ["A"], bounds={"A": (0, 100)}, epsilon=1.0, method="record-noise", identifiers=["name"])
    out = tmp_path / "dp.csv"
    write_dp_release(release, data, out, identifiers=["name"])
    report, written = json.loads(report_path(out).read_text()), audit_path(out).read_bytes()
    key = json.loads(written)["mac_key"]
    assert report["audit_report"]["name"] == "dp.audit.json"
    assert report["audit_report"]["mac"] == audit_mac(written) and key not in report_path(out).read_text()
    assert set(report["audit_report"]) == {"name", "mac"} and report["audit_report"]["mac"].startswith("hmac-sha256:")
    # the same bytes under another key give another MAC: guessing the figures needs the key
    other = json.dumps({**json.loads(written), "mac_key": "00" * 32}).encode()
    assert audit_mac(other) != audit_mac(written)


def dp_to(out, force=False):
    data = table(10.0)
    release = dp_release(data, ["A"], bounds={"A": (0, 100)}, epsilon=1.0, method="record-noise", identifiers=["name"])
    return write_dp_release(release, data, out, identifiers=["name"], force=force)


def test_an_audit_is_replaced_with_its_release_but_never_once_edited_or_someone_elses(tmp_path):
    out = tmp_path / "dp.csv"
    dp_to(out)
    first = audit_path(out).read_text()
    dp_to(out, force=True)  # ours, unchanged: replaced on request
    assert audit_path(out).read_text() != first
    edited = audit_path(out).read_text().replace('"note"', '"my note": "keep", "note"')
    audit_path(out).write_text(edited)
    with pytest.raises(OutputError, match="changed since microrelease wrote it; it is never overwritten"):
        dp_to(out, force=True)
    assert audit_path(out).read_text() == edited
    # a file of the user's where an audit would go, with no release: never touched
    mine = tmp_path / "mine.csv"
    audit_path(mine).write_text("my own notes")
    with pytest.raises(OutputError, match="is not part of a release written by microrelease"):
        dp_to(mine)
    assert audit_path(mine).read_text() == "my own notes" and not mine.exists()


def test_a_release_without_audit_does_not_leave_an_old_audit_beside_it(tmp_path):
    out = tmp_path / "t.csv"
    dp_to(out)
    people = pd.DataFrame({"zip": ["1", "1", "2", "2"]})
    dataset = load_dataset(people, qi=["zip"], hierarchies={"zip": Hierarchy("zip", (("1", "*"), ("2", "*")))})
    with pytest.raises(OutputError, match="t.audit.json belongs to the release this one would replace"):
        write_release(dataset, (1,), out, criteria=Criteria.of(2), output=OutputOptions(force=True))
    assert audit_path(out).exists() and json.loads(report_path(out).read_text())["kind"] == "differential privacy"


def test_the_audit_is_readable_by_its_owner_only_and_a_link_in_its_place_is_never_replaced(tmp_path):
    out = tmp_path / "dp.csv"
    dp_to(out)
    assert audit_path(out).stat().st_mode & 0o777 == 0o600  # beside files meant to travel, it is not one of them
    other = tmp_path / "o.csv"
    audit_path(other).symlink_to(tmp_path / "nowhere.json")  # a link of the user's, dangling
    with pytest.raises(OutputError, match="is not part of a release written by microrelease"):
        dp_to(other)
    dp_to(other.with_name("p.csv"))
    audit_path(other.with_name("p.csv")).unlink()
    audit_path(other.with_name("p.csv")).symlink_to(tmp_path / "nowhere.json")  # in a release of ours now
    with pytest.raises(OutputError, match="is not the audit its report p.report.json names"):
        dp_to(other.with_name("p.csv"), force=True)
    assert audit_path(other.with_name("p.csv")).is_symlink()


def test_an_in_memory_table_release_is_csv_and_says_so_for_another_suffix(tmp_path):
    with pytest.raises(OutputError, match="written as CSV; give a .csv name"):
        dp_to(tmp_path / "dp.parquet")
    assert list(tmp_path.iterdir()) == []
