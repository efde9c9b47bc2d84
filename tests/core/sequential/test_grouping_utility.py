"""The grouping by the release's loss (grouping.py, grouping_kernels.py, group_loss.py, refinement.py):
the compiled greedy against a pure-Python oracle, the bound it prunes with, the loss against the
release it predicts, the refinement's promises (never more suppression, groups of the same sizes), the
blocks, and the issue's utility targets on the bundled hospital sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from microrelease.core import Cancelled, Hierarchy
from microrelease.core.data.samples import sample_data_folder
from microrelease.core.sequential import alignment_kernels, group_loss, grouping, refinement
from microrelease.core.sequential.alignment_oracle import group_consensus
from microrelease.core.sequential.anonymize import anonymize_groups
from microrelease.core.sequential.cost import CostModel, CostWeights, node_ncp, time_span
from microrelease.core.sequential.grouping import centrality, group_entities, sketch
from microrelease.core.sequential.grouping_kernels import all_nearest, build_tree
from microrelease.core.sequential.rt_data import load_sequential
from microrelease.core.sequential.satellites import SLOTS
from microrelease.core.sequential.study import load_study
from microrelease.core.sequential.study_config import read_study
from microrelease.core.sequential.study_release import anonymize_study

SLOW = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
HOSPITAL = sample_data_folder("hospital")
CODES = Hierarchy("code", tuple((f"{c}{b}{i}", f"{c}{b}*", f"{c}**", "*") for c in "AB" for b in "01" for i in "01"))
AGE = Hierarchy("age", tuple((str(a), f"{a // 10 * 10}s", "*") for a in range(20, 40)))
SEX = Hierarchy("sex", (("F", "*"), ("M", "*")))


def make_data(histories, ages, sexes):
    """``histories``: per entity, visits as [(time, [(offset, code), ...]), ...] (as in test_scale.py)."""
    ids = [f"p{i}" for i in range(len(histories))]
    rows = [(e, f"{e}-{v}", time + offset, code) for e, visits in zip(ids, histories, strict=True)
            for v, (time, events) in enumerate(visits) for offset, code in events]
    return load_sequential(pd.DataFrame({"id": ids, "age": ages, "sex": sexes}),
                           pd.DataFrame(rows, columns=["id", "visit", "day", "code"]), entity_id="id",
                           qi=["age", "sex"], sequence_key="visit", order_by="day", code="code", code_hierarchy=CODES,
                           hierarchies={"age": AGE, "sex": SEX})


@st.composite
def histories(draw, max_entities=8, max_visits=4):
    n = draw(st.integers(2, max_entities))
    event = st.tuples(st.sampled_from([0, 0, 1, 3]), st.sampled_from(list(CODES.ground)))
    visits = st.lists(st.tuples(st.integers(0, 50), st.lists(event, min_size=1, max_size=4)), max_size=max_visits)
    return ([draw(visits) for _ in range(n)], [str(draw(st.integers(20, 39))) for _ in range(n)],
            [draw(st.sampled_from("FM")) for _ in range(n)])


def hospital(every: int = 1):
    patients = pd.read_csv(HOSPITAL / "patients.csv", dtype=str, keep_default_na=False).iloc[::every]
    visits = pd.read_csv(HOSPITAL / "visits.csv", dtype=str, keep_default_na=False)
    visits = visits[visits["patient_id"].isin(patients["patient_id"])]
    return load_sequential(patients[["patient_id", "name", "age", "sex", "zip"]], visits, entity_id="patient_id",
                           qi=["age", "sex", "zip"], sequence_key="visit_id", order_by="day", code="code",
                           code_hierarchy=HOSPITAL / "hospital_hierarchy_code.csv", hierarchy_dir=HOSPITAL,
                           identifiers=["name"])


# --- the oracle: the loss and the greedy written out in Python -------------------------------------------

class Oracle:
    """The loss of group_loss.py's docstring, from the hierarchies (no kernel tables), and the greedy of
    grouping.py's docstring comparing every remaining entity; the only kernel used is the alignment of
    one member to a consensus (``merge_member``, itself tested against Python in test_scale.py)."""

    def __init__(self, model: CostModel):
        self.model, self.data = model, model.data
        d, w = self.data, model.weights
        per_entity = np.diff(d.code_ptr[d.visit_ptr])
        mean = float(per_entity.mean()) if len(per_entity) and per_entity.mean() > 0 else 1.0
        self.w_rel, self.w_sup = w.relational, w.sequence * group_loss.SUPPRESSION / mean
        self.mu, self.n_codes = group_loss.GENERALIZATION, per_entity
        self.code_ncp = node_ncp(d.code_hierarchy)
        # a satellite row suppressed: NCP 1 on one of F's slots of its table
        self.satellites = [(np.diff(t.row_ptr), w.relational * len(t.qi) / SLOTS / d.cost_qi_weights.sum())
                           for t in d.satellites]

    def relational(self, members) -> float:
        """Mean over the QIs (in a study, and the satellites' slots, weighted as in F) of the NCP of the
        members' lowest common generalization (1 if none)."""
        total, weights = 0.0, self.data.cost_qi_weights
        for q, h in enumerate(self.data.cost_hierarchies):
            values = self.data.cost_qi_codes[members, q]
            level = next((lv for lv in range(h.height + 1) if len(set(h.codes[lv][values])) == 1), None)
            if level is None:  # they never meet: the level above the top
                ncp = 1.0 if len(h.ground) > 1 else 0.0
            else:
                ncp = node_ncp(h)[level][h.codes[level][values[0]]]
            total += weights[q] * ncp
        return total / weights.sum() if len(weights) else 0.0

    def value(self, codes) -> float:
        h, total = self.data.code_hierarchy, 0.0
        for level, rep in codes:
            total += 1.0 - self.mu * self.code_ncp[level][h.codes[level][rep]]
        return total

    def loss(self, members) -> tuple[float, int]:
        """(loss, codes suppressed) with the release's own (pure-Python) consensus."""
        members = sorted(int(e) for e in members)
        visits = group_consensus(self.data, members, self.model.weights.time, time_span(self.data))
        kept = [c for v in visits for c in v.codes]
        size, total = len(members), int(self.n_codes[members].sum())
        rel = self.relational(members)
        return (self.w_rel * size * rel + self.w_sup * (total - size * self.value(kept)) + self.rows(members),
                total - size * len(kept))

    def rows(self, members) -> float:
        """The satellites' rows the group suppresses (all but the fewest a member has), priced."""
        return sum(price * (counts[members].sum() - len(members) * counts[members].min())
                   for counts, price in self.satellites)

    def greedy(self, k: int) -> np.ndarray:
        d, model = self.data, self.model
        n = d.n_entities
        hcodes, tab = group_loss.LossModel(model).hcodes, group_loss.LossModel(model).tab
        far = centrality(model)
        order = np.lexsort((np.arange(n), -far))
        group, g, left = np.full(n, -1), 0, n
        for s in order:
            if left < k:
                break
            if group[s] >= 0:
                continue
            group[s], members, left = g, [int(s)], left - 1
            v0, v1 = d.visit_ptr[s], d.visit_ptr[s + 1]
            cons = (np.array([d.times[d.code_ptr[v]] for v in range(v0, v1)], dtype=d.times.dtype),
                    np.array([d.times[d.code_ptr[v + 1] - 1] for v in range(v0, v1)], dtype=d.times.dtype),
                    (d.code_ptr[v0:v1 + 1] - d.code_ptr[v0]).astype(np.int64),
                    np.zeros(d.code_ptr[v1] - d.code_ptr[v0], dtype=np.int64),
                    d.codes[d.code_ptr[v0]:d.code_ptr[v1]].astype(np.int64))
            for _ in range(k - 1):
                size, rel = len(members), self.relational(members)
                value = self.value(zip(cons[3], cons[4], strict=True))
                best = None
                for c in np.flatnonzero(group < 0):
                    merged = alignment_kernels.merge_member(*cons, int(c), d.visit_ptr, d.code_ptr, d.codes.astype(np.int64),
                                                       d.times, hcodes, tab, model.weights.time, model.span,
                                                       alignment_kernels.STEP_BYTES)
                    grown = members + [int(c)]
                    kept = self.value(zip(merged[3], merged[4], strict=True))
                    score = self.w_rel * ((size + 1) * self.relational(grown) - size * rel) + \
                        self.w_sup * (self.n_codes[c] - (size + 1) * kept + size * value) + \
                        (self.rows(grown) - self.rows(members))
                    if best is None or score < best[0]:
                        best = (score, int(c), merged)
                _, c, cons = best
                group[c] = g
                members.append(c)
                left -= 1
            g += 1
        for e in np.flatnonzero(group < 0):  # leftovers: every group is among the candidates
            grown = [self.loss(np.append(np.flatnonzero(group == h), e))[0] - self.loss(np.flatnonzero(group == h))[0]
                     for h in range(g)]
            group[e] = int(np.argmin(grown))
        return group


# --- the greedy and the loss against the oracle ----------------------------------------------------------

@SLOW
@given(histories(max_entities=9), st.data())
def test_compiled_greedy_equals_the_oracle(case, draw):
    data = make_data(*case)
    k = draw.draw(st.integers(1, data.n_entities))
    weights = draw.draw(st.sampled_from([CostWeights(), CostWeights(0.2, 0.8, 0.5), CostWeights(1.0, 0.0, 1.0)]))
    model = CostModel(data, weights)
    expected = Oracle(model).greedy(k)
    np.testing.assert_array_equal(group_entities(model, k, candidates=None, passes=0), expected)
    # the tree returning everyone gives the same candidates; the pruning by the bound changes nothing
    np.testing.assert_array_equal(group_entities(model, k, candidates=data.n_entities, passes=0), expected)


def test_compiled_greedy_equals_the_oracle_on_hospital_patients():
    model = CostModel(hospital(every=10))  # 200 patients
    for k in (2, 3, 5):
        np.testing.assert_array_equal(group_entities(model, k, candidates=None, passes=0), Oracle(model).greedy(k))


@SLOW
@given(histories(max_entities=8), st.data())
def test_group_loss_is_what_the_release_loses(case, draw):
    data = make_data(*case)
    model = CostModel(data)
    members = sorted(draw.draw(st.sets(st.integers(0, data.n_entities - 1), min_size=1)))
    loss, suppressed = group_loss.LossModel(model).loss(members)
    expected = Oracle(model).loss(members)
    assert loss == pytest.approx(expected[0], rel=1e-12, abs=1e-12) and suppressed == expected[1]
    groups = np.where(np.isin(np.arange(data.n_entities), members), 0, 1 + np.arange(data.n_entities))
    groups = np.unique(groups, return_inverse=True)[1]
    release = anonymize_groups(data, groups, 1)
    assert release.suppressed_elements[members].sum() == suppressed


@SLOW
@given(histories(max_entities=8, max_visits=5), st.data())
def test_the_bound_never_falls_below_what_an_alignment_keeps(case, draw):
    data = make_data(*case)
    model = CostModel(data)
    loss = group_loss.LossModel(model)
    visit_ptr, code_ptr, codes, times = data.visit_ptr, data.code_ptr, loss.codes, data.times
    hcodes, tab = loss.hcodes, loss.tab
    mu, w_time, span, step = loss.mu, model.weights.time, model.span, alignment_kernels.STEP_BYTES
    members = np.array(sorted(draw.draw(st.sets(st.integers(0, data.n_entities - 1), min_size=1, max_size=3))))
    low, high, ptr, level, rep = alignment_kernels.group_consensus(members, visit_ptr, code_ptr, codes, times, hcodes, tab,
                                                              w_time, span, step)
    e = draw.draw(st.integers(0, data.n_entities - 1))
    merged = alignment_kernels.merge_member(low, high, ptr, level, rep, e, visit_ptr, code_ptr, codes, times, hcodes, tab,
                                       w_time, span, step)
    kept = group_loss.consensus_value(merged[3], merged[4], hcodes, tab, mu)
    tops = group_loss.visit_tops(ptr, level, rep, hcodes, tab, mu)
    rows = np.empty((3, visit_ptr[e + 1] - visit_ptr[e] + 1))
    assert kept <= group_loss.value_bound(ptr, tops, e, visit_ptr, code_ptr, rows) + 1e-12
    assert kept <= group_loss.consensus_value(level, rep, hcodes, tab, mu) + 1e-12
    assert len(merged[3]) <= min(len(level), code_ptr[visit_ptr[e + 1]] - code_ptr[visit_ptr[e]])


def small_study(folder, patients: int):
    """The bundled study cut to its first ``patients`` patients (every table), in ``folder``."""
    source = sample_data_folder("study")
    folder.mkdir()
    for path in source.iterdir():
        if path.suffix == ".csv" and not path.name.startswith("hierarchy_"):
            table = pd.read_csv(path, dtype=str, keep_default_na=False)
            keep = sorted(pd.read_csv(source / "patients.csv", dtype=str)["patient_id"])[:patients]
            table[table["patient_id"].isin(keep)].to_csv(folder / path.name, index=False)
        elif path.suffix in (".csv", ".toml"):
            (folder / path.name).write_bytes(path.read_bytes())
    return load_study(read_study(folder / "study.toml"))


def test_compiled_greedy_equals_the_oracle_on_a_study(tmp_path):
    """Satellites (priced rows, slots in rel) and two event tables whose codes never meet."""
    model = CostModel(small_study(tmp_path / "study", 60))
    for k in (2, 5):
        np.testing.assert_array_equal(group_entities(model, k, candidates=None, passes=0), Oracle(model).greedy(k))


def test_the_satellite_term_counts_the_rows_the_release_suppresses():
    """A study: per satellite table, the release keeps as many rows per group as its member with fewest;
    the loss's term counts exactly those the release suppresses, and its whole loss is the oracle's."""
    data = load_study(read_study(sample_data_folder("study") / "study.toml"))
    model = CostModel(data)
    loss, oracle = group_loss.LossModel(model), Oracle(model)
    groups = group_entities(model, 5)
    release = anonymize_study(data, 5)
    np.testing.assert_array_equal(release.base.groups, groups)  # the same grouping: nothing seeded
    members = [np.flatnonzero(groups == g) for g in range(groups.max() + 1)]
    for t, sat in enumerate(data.satellites):
        counts = np.diff(sat.row_ptr)
        assert sum(counts[m].sum() - len(m) * counts[m].min() for m in members) == release.suppressed[sat.name]
        term = sum(group_loss.rows_loss(m, len(m), -1, -1, loss.rows[:, t:t + 1].copy(), np.ones(1)) for m in members)
        assert term == release.suppressed[sat.name]
    for m in members[:40]:
        assert loss.loss(m)[0] == pytest.approx(oracle.loss(m)[0], rel=1e-12)


# --- the refinement ---------------------------------------------------------------------------------------

def suppressed(data, groups, k) -> int:
    return int(anonymize_groups(data, groups, k).suppressed_elements.sum())


def total_loss(loss, groups) -> float:
    return sum(loss.loss(np.flatnonzero(groups == g))[0] for g in range(groups.max() + 1))


@SLOW
@given(histories(max_entities=12), st.data())
def test_refinement_never_raises_the_suppression_nor_the_loss(case, draw):
    data = make_data(*case)
    k = draw.draw(st.integers(1, max(1, data.n_entities // 2)))
    model = CostModel(data)
    # a low price of suppression lets the QIs' NCP drive swaps, which must still never suppress more
    price = draw.draw(st.sampled_from([0.01, group_loss.SUPPRESSION]))
    loss, points = group_loss.LossModel(model, suppression=price), sketch(model)
    before = group_entities(model, k, passes=0)
    after = refinement.refine_groups(loss, before, points, near=draw.draw(st.integers(1, 6)), passes=2)
    assert sorted(np.bincount(after)) == sorted(np.bincount(before))  # swaps only
    assert suppressed(data, after, k) <= suppressed(data, before, k)
    assert total_loss(loss, after) <= total_loss(loss, before) + 1e-9


@pytest.mark.parametrize("k", [2, 5])
def test_refinement_on_hospital_patients_lowers_the_suppression(k):
    data = hospital(every=4)  # 500 patients
    model = CostModel(data)
    loss, points = group_loss.LossModel(model), sketch(model)
    before = group_entities(model, k, passes=0)
    after = refinement.refine_groups(loss, before, points)
    assert suppressed(data, after, k) < suppressed(data, before, k)
    assert total_loss(loss, after) < total_loss(loss, before)
    np.testing.assert_array_equal(np.bincount(after), np.bincount(before))
    np.testing.assert_array_equal(refinement.refine_groups(loss, before, points), after)  # deterministic


# --- blocks -----------------------------------------------------------------------------------------------

def test_blocks_partition_the_data_and_hold_whole_groups(monkeypatch):
    model = CostModel(hospital(every=8))  # 250 patients
    monkeypatch.setattr(grouping, "BLOCK", 100)
    points = sketch(model)
    parts = grouping.blocks(points, 5)
    assert len(parts) == 2 and all(len(p) >= 100 for p in parts)
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(model.data.n_entities))
    groups = group_entities(model, 5)
    for g in range(groups.max() + 1):
        assert sum(bool(np.isin(np.flatnonzero(groups == g), p).all()) for p in parts) == 1
    assert np.bincount(groups).min() >= 5
    alone = CostModel(model.data, workers=1)
    np.testing.assert_array_equal(group_entities(alone, 5), groups)  # the threads change nothing
    assert len(grouping.blocks(points, 130)) == 1  # a block holds at least k


def test_all_nearest_is_brute_force():
    rng = np.random.default_rng(3)
    points = rng.integers(0, 3, (80, 3)).astype(float)  # many ties
    got = all_nearest(points, build_tree(points), 5)
    for p in range(len(points)):
        dist = np.abs(points - points[p]).sum(axis=1)
        others = np.array([q for q in np.lexsort((np.arange(len(points)), dist)) if q != p])
        np.testing.assert_array_equal(got[p], others[:5])


# --- progress, cancellation and the issue's targets ------------------------------------------------------

def test_cancellation_reaches_the_refinement():
    model = CostModel(hospital(every=10))
    seen = []

    def stop():  # only once the greedy is done (progress beyond two thirds)
        return bool(seen) and seen[-1] > 2 / 3

    with pytest.raises(Cancelled, match="grouping cancelled"):
        group_entities(model, 5, progress=seen.append, should_stop=stop)
    assert seen == sorted(seen) and 2 / 3 < seen[-1] < 1


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_bad_passes_are_named(bad):
    with pytest.raises(Exception, match="'passes'"):
        group_entities(CostModel(hospital(every=100)), 2, passes=bad)


def test_the_issue_targets_on_the_hospital_sample():
    """Issue 16, item 4: at k = 5 at most 25 % of the codes suppressed and a relational NCP of at most
    0.26 (with the F-nearest grouping before: 36.5 % and 0.253)."""
    data = hospital()
    release = anonymize_groups(data, group_entities(CostModel(data), 5), 5)
    assert release.suppressed_elements.sum() / len(data.codes) <= 0.25
    assert release.relational_loss <= 0.26
