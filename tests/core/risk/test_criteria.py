"""Risk-based privacy models in the lattice search, against each node's generalized table built here
(pandas group-by) and a brute-force search for the minimal satisfying nodes."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sweeps import sweep

from microrelease.core.criteria.criterion import Scope
from microrelease.core.criteria.registry import CRITERIA as REGISTRY
from microrelease.core.criteria.registry import parse_criteria
from microrelease.core.data.dataset import load_dataset
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.lattice.profile import build_profile
from microrelease.core.lattice.search import query
from microrelease.core.risk.criteria import AverageRisk, PopulationUniqueness, RecordsAtRisk
from microrelease.core.risk.uniqueness import dankar

H_AGE = Hierarchy("age", tuple((str(a), f"{a // 2 * 2}-{a // 2 * 2 + 1}", f"{a // 4 * 4}+", "*") for a in range(20, 28)))
H_SEX = Hierarchy("sex", (("F", "*"), ("M", "*")))
H_ZIP = Hierarchy("zip", (("z1", "z*"), ("z2", "z*"), ("z3", "z*")))


def table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(20, 28, n).astype(str), "sex": rng.choice(["F", "M"], n),
                         "zip": rng.choice(["z1", "z2", "z3"], n, p=[0.6, 0.3, 0.1])})


def released_sizes(frame: pd.DataFrame, node, k: int) -> np.ndarray:
    gen = pd.DataFrame({h.attribute: h.generalize(frame[h.attribute], d) for h, d in zip((H_AGE, H_SEX, H_ZIP), node,
                                                                                          strict=True)})
    sizes = gen.groupby(list(gen.columns)).size().to_numpy()
    return sizes[sizes >= k]


def brute(frame, node, k, criterion) -> float:
    sizes = released_sizes(frame, node, k)
    n = sizes.sum()
    if isinstance(criterion, AverageRisk):
        return len(sizes) / n if n else 0.0
    if isinstance(criterion, RecordsAtRisk):
        return sizes[1 / sizes > criterion.threshold].sum() / n if n else 0.0
    values, counts = np.unique(sizes, return_counts=True)
    est = dankar(values, counts, criterion.sampling_fraction)
    return est.share if est.converged else 1.0


CRITERIA = [AverageRisk(0.3), AverageRisk(0.05), RecordsAtRisk(0.2, 0.1), RecordsAtRisk(0.5, 0.0),
            PopulationUniqueness(0.02, 0.1), PopulationUniqueness(0.0, 0.5)]


@pytest.mark.parametrize("seed", sweep(range(4)))
def test_every_node_s_figure_and_the_minimal_nodes_equal_a_brute_force_search(seed, tmp_path):
    frame = table(seed, 40 + 30 * seed)
    frame.to_csv(tmp_path / "t.csv", index=False)
    profile = build_profile(load_dataset(tmp_path / "t.csv", qi=("age", "sex", "zip"),
                                         hierarchies={h.attribute: h for h in (H_AGE, H_SEX, H_ZIP)}))
    lattice = profile.lattice
    for k, max_sup, criterion in itertools.product((1, 2, 3), (0, 5, len(frame)), CRITERIA):
        answer = query(profile, k, max_sup, (criterion,))
        figure = criterion.figure(profile, k)
        ok = {}
        for i, node in enumerate(lattice):
            value = brute(frame, node, k, criterion)
            assert figure[i] == pytest.approx(value, rel=1e-9, abs=1e-12), (criterion, node, k)
            suppressed = len(frame) - released_sizes(frame, node, k).sum()
            limit = criterion.limit if hasattr(criterion, "limit") else criterion.share
            ok[node] = suppressed <= max_sup and value <= limit + 1e-12
        for i, node in enumerate(lattice):
            assert answer.satisfying[i] == ok[node]
            below = [v for v in itertools.product(*(range(d + 1) for d in node)) if v != node]
            assert answer.minimal[i] == (ok[node] and not any(ok[v] for v in below)), (criterion, node, k)


def test_specs_are_parsed_and_bad_ones_refused_by_name():
    assert parse_criteria({"max_risk": "0.05", "max_records_at_risk": "0.2:0.01", "max_uniqueness": "0.01:0.1",
                           "other": None}) == (AverageRisk(0.05), RecordsAtRisk(0.2, 0.01),
                                               PopulationUniqueness(0.01, 0.1))
    for parameter, spec in (("max_risk", "0"), ("max_risk", "1.5"), ("max_risk", "x"), ("max_records_at_risk", "0.2"),
                            ("max_uniqueness", "0.01:0"), ("max_uniqueness", "nan:0.1")):
        with pytest.raises(InvalidParameterError) as err:
            parse_criteria({parameter: spec})
        assert err.value.parameter == parameter
    assert {cls.parameter for cls in REGISTRY.values() if cls.scope is Scope.RELEASE} == {
        "max_risk", "max_records_at_risk", "max_uniqueness"}
