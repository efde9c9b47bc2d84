"""Releases: identifiers never written, every suppressed row counted, the read-back check bites."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import microrelease.core.release as release_module
from microrelease.core import (
    Hierarchy,
    InvalidParameterError,
    VerificationError,
    check_k_anonymity,
    load_dataset,
    masking,
    write_release,
)
from microrelease.core.release import report_path


def people():
    table = pd.DataFrame({
        "name": ["Ann", "Bob", "Cy", "Di", "Ed", "Flo"],
        "zip": ["94142", "94141", "94139", "94139", "94138", "94101"],
        "sex": ["F", "M", "M", "F", "M", "F"],
        "diagnosis": ["flu", "cold", "flu", "asthma", "flu", "cold"],
    })
    sex = Hierarchy("sex", (("F", "*"), ("M", "*")))
    return load_dataset(table, qi=["zip", "sex"], hierarchies={"zip": masking("zip", table["zip"], [1, 2]), "sex": sex},
                        identifiers=["name"], sensitive=["diagnosis"])


def test_release_drops_identifiers_counts_suppression_and_reports(tmp_path):
    ds = people()
    out = tmp_path / "release.csv"
    report = write_release(ds, (1, 1), 2, out, max_sup=2).data
    written = pd.read_csv(out, dtype=str)
    assert "name" not in written.columns
    assert list(written.columns) == ["zip", "sex", "diagnosis"]
    # 9414* and 9413* hold 2 and 3 rows; 9410* holds one row (Flo) and is suppressed
    assert report["suppressed"] == {"count": 1, "rows": [5], "row_numbering": report["suppressed"]["row_numbering"]}
    assert len(written) == 5 == report["output"]["rows"] == report["input"]["rows"] - report["suppressed"]["count"]
    assert check_k_anonymity(written, ["zip", "sex"], 2).is_k_anonymous
    assert report["verification"]["k_anonymous"] and report["verification"]["identifiers_absent"]
    assert report["parameters"]["identifiers_dropped"] == ["name"]
    assert report["input"]["checksum"].startswith("sha256:")
    assert json.loads(report_path(out).read_text()) == report
    assert report["metrics"]["completeness"] == pytest.approx(5 / 6)


def test_release_refuses_a_node_over_max_sup(tmp_path):
    with pytest.raises(InvalidParameterError, match=r"node \[0, 0\] needs 6 suppressed rows for k=2, over MaxSup=1"):
        write_release(people(), (0, 0), 2, tmp_path / "r.csv", max_sup=1)
    assert not (tmp_path / "r.csv").exists()


def test_read_back_check_catches_a_broken_writer(tmp_path, monkeypatch):
    # Simulate a writer bug: the generalized table loses its generalization on the way to disk.
    real = release_module.generalize

    def broken(dataset, node, k, **models):
        gt = real(dataset, node, k, **models)
        gt.released["zip"] = dataset.table.loc[gt.released.index, "zip"]
        return gt

    monkeypatch.setattr(release_module, "generalize", broken)
    with pytest.raises(VerificationError, match="smallest class has 1 rows < k=2"):
        write_release(people(), (1, 1), 2, tmp_path / "r.csv")
    assert list(tmp_path.iterdir()) == []  # nothing left that could pass for a release


def test_read_back_check_catches_a_class_that_fails_a_model(tmp_path, monkeypatch):
    from microrelease.core.privacy_models import DistinctLDiversity
    from microrelease.core.sensitive_profile import sensitive_frequency

    real = release_module.generalize

    def forgets_the_model(dataset, node, k, **models):
        return real(dataset, node, k)  # a writer bug: the model's suppression is lost

    ds = people()
    monkeypatch.setattr(release_module, "generalize", forgets_the_model)
    with pytest.raises(VerificationError, match="fail distinct 2-diversity"):
        write_release(ds, (0, 0), 1, tmp_path / "r.csv", sensitive=sensitive_frequency(ds, "diagnosis"),
                      models=[DistinctLDiversity(2)])
    assert not (tmp_path / "r.report.json").exists() and not (tmp_path / "r.csv").exists()


def test_check_k_anonymity_lists_the_smallest_classes():
    df = pd.DataFrame({"a": ["x", "x", "y", "z", "z", "z"], "b": ["1"] * 6})
    result = check_k_anonymity(df, ["a", "b"], 2)
    assert not result.is_k_anonymous
    assert result.smallest_classes.iloc[0].tolist() == ["y", "1", 1]
    assert result.n_classes == 3
