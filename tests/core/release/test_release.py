"""Releases: identifiers never written, every suppressed row counted, the read-back check bites."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import microrelease.core.lattice.node_release as release_module
from microrelease.core import (
    Criteria,
    Hierarchy,
    InvalidParameterError,
    OutputOptions,
    VerificationError,
    check_k_anonymity,
    load_dataset,
    masking,
    write_release,
)
from microrelease.core.data.reading import file_checksum
from microrelease.core.release import report_path
from microrelease.core.release.publishing import strict_json


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
    report = write_release(ds, (1, 1), out, criteria=Criteria.of(2), max_sup=2, output=OutputOptions(list_classes=10)).data
    written = pd.read_csv(out, dtype=str)
    assert "name" not in written.columns
    assert list(written.columns) == ["zip", "sex", "diagnosis"]
    # 9414* and 9413* hold 2 and 3 rows; 9410* holds one row (Flo) and is suppressed, listed as a class
    assert report["counts"]["suppressed_rows"] == 1 == report["metrics"]["suppressed"]
    assert "rows" not in report["suppressed"]  # never input positions: they would single out the outliers
    assert report["suppressed"]["classes"] == [{"zip": "9410*", "sex": "*", "size": 1, "reason": "smaller than k=2"}]
    assert "private" in report["suppressed"]["note"]
    # by default the report counts the suppressed classes but does not list them: they single out outliers
    default = write_release(ds, (1, 1), tmp_path / "public.csv", criteria=Criteria.of(2), max_sup=2).data
    assert default["suppressed"] == {"classes_total": 1, "classes_listed": 0} and "9410*" not in json.dumps(default)
    assert len(written) == 5 == report["output"]["rows"] == report["counts"]["input_rows"] - 1
    assert check_k_anonymity(written, ["zip", "sex"], 2).is_k_anonymous
    checks = {c["check"]: c["passed"] for c in report["verification"]}
    assert checks.items() >= {"2-anonymity": True, "identifiers absent": True, "MaxSup": True}.items()
    assert report["parameters"]["identifiers_dropped"] == ["name"]
    assert report["input"]["checksum"].startswith("sha256:")
    assert json.loads(report_path(out).read_text()) == report
    assert report["output"]["files"] == [{"name": "release.csv", "bytes": out.stat().st_size,
                                          "checksum": file_checksum(out)}]
    assert report["metrics"]["completeness"] == pytest.approx(5 / 6)


def test_release_refuses_a_node_over_max_sup(tmp_path):
    with pytest.raises(InvalidParameterError, match=r"node \[0, 0\] needs 6 suppressed rows for 2-anonymity, over MaxSup=1"):
        write_release(people(), (0, 0), tmp_path / "r.csv", criteria=Criteria.of(2), max_sup=1)
    assert not (tmp_path / "r.csv").exists()


def test_read_back_check_catches_a_broken_writer(tmp_path, monkeypatch):
    # Simulate a writer bug: the rows lose their generalization on the way to disk.
    from microrelease.core.engines import pandas_engine

    real = pandas_engine.apply_plan

    def broken(frame, plan):
        released = real(frame, plan)
        released["zip"] = frame.loc[released.index, "zip"].to_numpy()
        return released

    monkeypatch.setattr(pandas_engine, "apply_plan", broken)
    with pytest.raises(VerificationError, match=r"2-anonymity: 3 of 4 classes fail \(smallest 1 rows\); levels of zip"):
        write_release(people(), (1, 1), tmp_path / "r.csv", criteria=Criteria.of(2))
    assert list(tmp_path.iterdir()) == []  # nothing left that could pass for a release


def test_read_back_check_catches_a_class_that_fails_a_model(tmp_path, monkeypatch):
    from microrelease.core.models.l_diversity import DistinctLDiversity
    from microrelease.core.models.sensitive import sensitive_frequency

    real = release_module.node_suppression

    def forgets_the_model(data, node, criteria):
        return real(data, node, Criteria.of(criteria.k.k))  # a writer bug: the model's suppression is lost

    ds = people()
    monkeypatch.setattr(release_module, "node_suppression", forgets_the_model)
    with pytest.raises(VerificationError, match="distinct 2-diversity: 6 of 6 classes fail"):
        write_release(ds, (0, 0), tmp_path / "r.csv", criteria=Criteria.of(1, DistinctLDiversity(2),
                                                                    sensitive=sensitive_frequency(ds, "diagnosis")))
    assert list(tmp_path.iterdir()) == []


def test_check_k_anonymity_lists_the_smallest_classes():
    df = pd.DataFrame({"a": ["x", "x", "y", "z", "z", "z"], "b": ["1"] * 6})
    result = check_k_anonymity(df, ["a", "b"], 2)
    assert not result.is_k_anonymous
    assert result.smallest_classes.iloc[0].tolist() == ["y", "1", 1]
    assert result.n_classes == 3


def test_a_report_writes_a_float_that_is_not_finite_as_a_string():
    report = {"loss": np.float64("inf"), "nested": [float("-inf"), (float("nan"), 2.5)], "name": "inf", "n": None}
    assert strict_json(report) == {"loss": "inf", "nested": ["-inf", ["nan", 2.5]], "name": "inf", "n": None}
    assert json.loads(json.dumps(strict_json(report), allow_nan=False)) == strict_json(report)
