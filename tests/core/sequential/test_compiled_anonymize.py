"""The release is built from the compiled alignment of every group (``alignment.align_groups``): the same
released histories, suppression counts and intervals as the pure-Python ``group_consensus`` per group."""

from __future__ import annotations

import numpy as np
import pytest
from sequential_util import by_entity

from microrelease.core.data.samples import sample_data_folder
from microrelease.core.sequential import anonymize as anonymize_module
from microrelease.core.sequential.alignment_oracle import group_consensus
from microrelease.core.sequential.anonymize import anonymize_groups
from microrelease.core.sequential.cost import CostModel, CostWeights
from microrelease.core.sequential.grouping import group_entities
from microrelease.core.sequential.rt_data import load_sequential


def hospital(every: int):
    import pandas as pd

    h = sample_data_folder("hospital")
    patients = pd.read_csv(h / "patients.csv", dtype=str).iloc[::every]
    visits = pd.read_csv(h / "visits.csv", dtype=str)
    visits = visits[visits["patient_id"].isin(patients["patient_id"])]
    return load_sequential(patients[["patient_id", "name", "age", "sex", "zip"]], visits, entity_id="patient_id",
                           qi=["age", "sex", "zip"], sequence_key="visit_id", order_by="day", code="code",
                           code_hierarchy=h / "hospital_hierarchy_code.csv", hierarchy_dir=h, identifiers=["name"])


@pytest.mark.parametrize("k", [2, 5])
def test_the_compiled_release_equals_the_pure_python_one(k, monkeypatch):
    data = hospital(every=8)  # 250 patients
    groups = group_entities(CostModel(data, CostWeights()), k)
    compiled = anonymize_groups(data, groups, k)

    def python_consensus(aligned, g):  # what the loop used before: the pure-Python alignment, group by group
        members = [int(e) for e in np.flatnonzero(groups == g)]
        return group_consensus(data, members, 1.0, anonymize_module.time_span(data))

    monkeypatch.setattr(anonymize_module, "consensus_of", python_consensus)
    python = anonymize_groups(data, groups, k)
    assert np.array_equal(compiled.suppressed_elements, python.suppressed_elements)
    assert by_entity(compiled) == by_entity(python)
    assert compiled.sequence_loss == pytest.approx(python.sequence_loss, abs=1e-12)
    mine = {e: tuple(map(tuple, compiled.intervals[n])) for e, n in enumerate(compiled.pseudonym)}
    theirs = {e: tuple(map(tuple, python.intervals[n])) for e, n in enumerate(python.pseudonym)}
    assert mine == theirs
