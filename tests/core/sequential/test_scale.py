"""Scale of relational + sequential anonymization: the compiled kernels against pure-Python oracles
(F, and the group alignment the anonymization uses), the k-d tree against brute force, and the
sub-quadratic grouping against the one comparing every remaining entity (groups of >= k, the loss
within a stated factor)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from microrelease.core import Cancelled, Hierarchy, InvalidParameterError
from microrelease.core.data.samples import sample_data_folder
from microrelease.core.sequential import cost_kernels as kernels
from microrelease.core.sequential.alignment import align_groups
from microrelease.core.sequential.alignment_oracle import group_consensus
from microrelease.core.sequential.cost import (
    CostModel,
    CostWeights,
    costs_from,
    hierarchy_tables,
    ncp_matrix,
    stacked_tables,
    time_span,
)
from microrelease.core.sequential.group_loss import LossModel
from microrelease.core.sequential.grouping import group_entities
from microrelease.core.sequential.grouping_kernels import build_tree, forget, nearest
from microrelease.core.sequential.rt_data import load_sequential

HOSPITAL = sample_data_folder("hospital")
CODES = Hierarchy("code", tuple((f"{c}{b}{i}", f"{c}{b}*", f"{c}**", "*") for c in "AB" for b in "01" for i in "01"))
AGE = Hierarchy("age", tuple((str(a), f"{a // 10 * 10}s", "*") for a in range(20, 40)))
SEX = Hierarchy("sex", (("F", "*"), ("M", "*")))


# --- the oracles: plain Python, full tables ------------------------------------------------------------

def edit_distance(n: int, m: int, sub, drop_a, drop_b) -> float:
    cost = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        cost[i][0] = cost[i - 1][0] + drop_a(i - 1)
    for j in range(1, m + 1):
        cost[0][j] = cost[0][j - 1] + drop_b(j - 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost[i][j] = min(cost[i - 1][j] + drop_a(i - 1), cost[i][j - 1] + drop_b(j - 1),
                             cost[i - 1][j - 1] + sub(i - 1, j - 1))
    return cost[n][m]


def oracle_cost(data, weights: CostWeights, a: int, b: int) -> float:
    """F(a, b) from its definition (cost.py's docstring), with ground × ground NCP matrices."""
    rel = [ncp_matrix(h)[data.qi_codes[a, q], data.qi_codes[b, q]] for q, h in enumerate(data.hierarchies)]
    code_ncp = ncp_matrix(data.code_hierarchy)
    firsts = data.visit_time
    span = float(firsts.max() - firsts.min()) if len(firsts) and firsts.max() > firsts.min() else 1.0
    va, vb = data.visits(a), data.visits(b)

    def visit_sub(i, j):
        (ta, ca), (tb, cb) = va[i], vb[j]
        codes = edit_distance(len(ca), len(cb), lambda x, y: code_ncp[ca[x], cb[y]], lambda x: 1.0, lambda y: 1.0)
        return codes + weights.time * abs(ta - tb) / span

    seq = edit_distance(len(va), len(vb), visit_sub, lambda i: len(va[i][1]) + weights.time,
                        lambda j: len(vb[j][1]) + weights.time)
    total = sum(len(c) + weights.time for _, c in va + vb)
    relational = sum(rel) / len(rel) if rel else 0.0
    return weights.relational * relational + weights.sequence * (seq / total if total else 0.0)


def python_groups(data, groups, w_time: float, span: float):
    """The pure-Python alignment (alignment_oracle.group_consensus) of every group, as lists."""
    return [[(v.low, v.high, list(v.codes))
             for v in group_consensus(data, [int(e) for e in np.flatnonzero(groups == g)], w_time, span)]
            for g in range(int(groups.max()) + 1)]


def kernel_groups(consensus, n_groups):
    """:class:`GroupConsensus` as the oracle's lists."""
    out = []
    for g in range(n_groups):
        visits = []
        for v in range(consensus.group_ptr[g], consensus.group_ptr[g + 1]):
            a, b = consensus.code_ptr[v], consensus.code_ptr[v + 1]
            visits.append((consensus.low[v].item(), consensus.high[v].item(),
                           list(zip(consensus.level[a:b].tolist(), consensus.rep[a:b].tolist(), strict=True))))
        out.append(visits)
    return out


# --- random small data -----------------------------------------------------------------------------------

def make_data(histories, ages, sexes=None):
    """``histories``: per entity, visits as [(time, [(offset, code), ...]), ...]."""
    ids = [f"p{i}" for i in range(len(histories))]
    entities = pd.DataFrame({"id": ids, "age": ages, **({"sex": sexes} if sexes is not None else {})})
    rows = [(e, f"{e}-{v}", time + offset, code) for e, visits in zip(ids, histories, strict=True)
            for v, (time, events) in enumerate(visits) for offset, code in events]
    events = pd.DataFrame(rows, columns=["id", "visit", "day", "code"])
    qi = ["age", "sex"] if sexes is not None else ["age"]
    return load_sequential(entities, events, entity_id="id", qi=qi, sequence_key="visit", order_by="day", code="code",
                           code_hierarchy=CODES, hierarchies={q: {"age": AGE, "sex": SEX}[q] for q in qi})


@st.composite
def histories(draw, max_entities=8, max_visits=4):
    n = draw(st.integers(2, max_entities))
    fractional = draw(st.booleans())
    time = st.floats(0, 50, allow_nan=False).map(lambda t: round(t, 2)) if fractional else st.integers(0, 50)
    event = st.tuples(st.sampled_from([0, 0, 1, 3]), st.sampled_from(list(CODES.ground)))
    visits = st.lists(st.tuples(time, st.lists(event, min_size=1, max_size=4)), max_size=max_visits)
    hist = [draw(visits) for _ in range(n)]
    ages = [str(draw(st.integers(20, 39))) for _ in range(n)]
    sexes = [draw(st.sampled_from("FM")) for _ in range(n)]
    return hist, ages, sexes


weights = st.builds(CostWeights, st.sampled_from([0.0, 0.3, 0.5, 1.0]), st.sampled_from([0.2, 0.5, 1.0]),
                    st.sampled_from([0.0, 0.5, 1.0, 4.0]))


# --- F: compiled == oracle --------------------------------------------------------------------------------

@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(histories(), weights)
def test_compiled_cost_equals_the_oracle(case, w):
    data = make_data(*case)
    model, threaded = CostModel(data, w), CostModel(data, w, workers=2)
    threaded.PARALLEL_FROM = 1  # split even a few candidates over the threads
    n = data.n_entities
    everyone = np.arange(n)
    total = np.zeros(n)
    model.add_costs(everyone[::2], total)
    np.testing.assert_allclose(total, [sum(oracle_cost(data, w, a, b) for a in everyone[::2]) for b in everyone],
                               rtol=1e-12, atol=1e-12)
    size = max(len(h.ground) for h in data.hierarchies)
    qi_dense = np.stack([np.pad(ncp_matrix(h), (0, size - len(h.ground))) for h in data.hierarchies])
    for a in range(n):
        compiled = model.costs_from(a, everyone)
        expected = [oracle_cost(data, w, a, b) for b in everyone]
        np.testing.assert_allclose(compiled, expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(threaded.costs_from(a, everyone), compiled)
        dense = costs_from(a, everyone, data.qi_codes, qi_dense, data.visit_ptr, data.code_ptr, data.codes,
                           data.visit_time, ncp_matrix(CODES), w.relational, w.sequence, w.time, time_span(data))
        np.testing.assert_allclose(dense, expected, rtol=1e-12, atol=1e-12)


def test_hierarchy_tables_give_the_ncp_of_the_lowest_common_ancestor():
    for h in (CODES, AGE, SEX):
        hcodes, tab = hierarchy_tables(h)
        dense = ncp_matrix(h)
        got = [[kernels.node_cost(hcodes, tab, 0, u, v) for v in range(len(h.ground))] for u in range(len(h.ground))]
        np.testing.assert_array_equal(got, dense)
    hcodes, tab = stacked_tables([AGE, SEX])  # padded to one shape: each QI still gives its own NCP
    assert kernels.node_cost(hcodes[1], tab[1], 0, 0, 1) == 1.0 and kernels.node_cost(hcodes[1], tab[1], 0, 1, 1) == 0


# --- the group alignment: compiled == oracle ------------------------------------------------------------

@pytest.mark.slow  # a sweep: CI's second step (pytest -m slow)
@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(histories(max_entities=7), st.sampled_from([0.0, 0.5, 1.0, 3.0]), st.integers(1, 4), st.booleans())
def test_compiled_group_alignment_equals_the_oracle(case, w_time, k, blocks):
    data = make_data(*case)
    n = data.n_entities
    groups = np.arange(n) % max(1, n // k)  # interleaved groups, members in input order
    span = time_span(data)
    consensus = align_groups(data, groups, w_time=w_time, span=span, step_bytes=0 if blocks else 1 << 26,
                             workers=1 if blocks else 2)
    expected = python_groups(data, groups, w_time, span)
    assert kernel_groups(consensus, groups.max() + 1) == expected


def test_long_histories_align_in_blocks_as_in_one_table():
    rng = np.random.default_rng(7)
    leaves = list(CODES.ground)
    hist = [[(int(t), [(0, leaves[c]) for c in rng.integers(0, 8, rng.integers(1, 4))])
             for t in np.sort(rng.choice(2000, size, replace=False))] for size in (60, 45, 70)]
    data = make_data(hist, ["25", "26", "27"])
    groups = np.zeros(3, dtype=np.int64)
    whole = align_groups(data, groups, w_time=1.0, span=time_span(data))
    blocks = align_groups(data, groups, w_time=1.0, span=time_span(data), step_bytes=0)  # 8-row blocks
    [expected] = python_groups(data, groups, 1.0, time_span(data))
    assert kernel_groups(whole, 1) == kernel_groups(blocks, 1) == [expected]
    assert len(expected) > 20  # a real alignment, not an empty one


# --- the k-d tree: nearest ungrouped points == brute force ------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(1, 6), st.integers(1, 40), st.integers(0, 2**32 - 1), st.booleans())
def test_tree_finds_the_nearest_ungrouped_points(n, dims, want, seed, ties):
    rng = np.random.default_rng(seed)
    points = rng.integers(0, 4, (n, dims)).astype(float) if ties else rng.random((n, dims))
    tree = build_tree(points)
    alive = np.ones(n, dtype=np.bool_)
    for p in rng.choice(n, n // 2, replace=False):  # forget half of them, as grouping does
        forget(p, alive, tree)
    x = rng.random(dims) * 4
    best_d, best_i = np.empty(want), np.empty(want, dtype=np.int64)
    found = nearest(x, want, points, tree, alive, best_d, best_i)
    live = np.flatnonzero(alive)
    dist = np.abs(points[live] - x).sum(axis=1)
    order = np.lexsort((live, dist))[:want]  # nearest first, ties: smaller index
    assert found == min(want, len(live))
    np.testing.assert_array_equal(best_i[:found], live[order])


# --- grouping ---------------------------------------------------------------------------------------------

@pytest.mark.slow  # a sweep: CI's second step (pytest -m slow)
@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(histories(max_entities=12), st.data())
def test_groups_have_k_to_2k_minus_1_members(case, draw):
    data = make_data(*case)
    n = data.n_entities
    k = draw.draw(st.integers(1, n))
    candidates = draw.draw(st.sampled_from([1, 2, 64, None]))
    groups = group_entities(CostModel(data), k, candidates=candidates, passes=draw.draw(st.integers(0, 2)))
    sizes = np.bincount(groups)
    assert groups.min() == 0 and len(sizes) == n // k
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1


def hospital(every: int = 1):
    patients = pd.read_csv(HOSPITAL / "patients.csv", dtype=str, keep_default_na=False).iloc[::every]
    visits = pd.read_csv(HOSPITAL / "visits.csv", dtype=str, keep_default_na=False)
    visits = visits[visits["patient_id"].isin(patients["patient_id"])]
    return load_sequential(patients[["patient_id", "name", "age", "sex", "zip"]], visits, entity_id="patient_id",
                           qi=["age", "sex", "zip"], sequence_key="visit_id", order_by="day", code="code",
                           code_hierarchy=HOSPITAL / "hospital_hierarchy_code.csv", hierarchy_dir=HOSPITAL,
                           identifiers=["name"])


def total_loss(loss: LossModel, groups: np.ndarray) -> float:
    return sum(loss.loss(np.flatnonzero(groups == g))[0] for g in range(groups.max() + 1))


# Measured on the bundled sample (1,000 patients; the loss of the sketched greedy / the greedy comparing
# every remaining entity): 1.0026 at k = 2, 0.9952 at k = 5, 1.0091 at k = 10 (the greedy is not
# optimal, so the sketch may even do better); with only the k − 1 sketch-nearest: 1.30-1.42.
# Stated factor: within 3 %. (test_grouping_utility.py checks the greedy itself against an oracle.)
@pytest.mark.parametrize("k", [2, 5, 10])
def test_sketched_grouping_is_within_3_percent_of_comparing_everyone(k):
    model = CostModel(hospital(every=2))  # 1,000 patients
    loss = LossModel(model)
    exact, sketched = group_entities(model, k, candidates=None, passes=0), group_entities(model, k, passes=0)
    assert np.bincount(sketched).min() >= k
    ratio = total_loss(loss, sketched) / total_loss(loss, exact)
    assert ratio <= 1.03
    few = group_entities(model, k, candidates=k - 1, passes=0)  # no choice but the sketch's: clearly worse
    assert total_loss(loss, few) / total_loss(loss, exact) > ratio + 0.1


def test_tree_order_positions_bound_the_ncp():
    for h in (CODES, AGE, SEX):
        position, ncp = h.tree_order(), ncp_matrix(h)
        gap = np.abs(position[:, None] - position[None, :]) / (len(h.ground) - 1)
        assert (gap <= ncp + 1e-12).all()


def test_progress_and_cancellation():
    model = CostModel(hospital(every=20))
    seen = []
    group_entities(model, 5, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) > 10
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(Cancelled, match="grouping cancelled"):
        group_entities(model, 5, should_stop=stop)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "64"])
def test_bad_candidates_are_named(bad):
    with pytest.raises(InvalidParameterError, match="'candidates'"):
        group_entities(CostModel(hospital(every=100)), 2, candidates=bad)


@pytest.mark.parametrize("bad", [0, -1])
def test_bad_workers_are_named(bad):
    data = hospital(every=100)
    with pytest.raises(InvalidParameterError, match="'workers'"):
        CostModel(data, workers=bad)
    with pytest.raises(InvalidParameterError, match="'workers'"):
        align_groups(data, np.zeros(data.n_entities, dtype=np.int64), w_time=1.0, span=1.0, workers=bad)
