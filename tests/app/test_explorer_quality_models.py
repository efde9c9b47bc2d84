"""Quality policies under privacy models in the dashboard's state: the models' profile is built with the
share mass whichever is chosen first, and the preferred node is the command line's."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("panel")

from microrelease.app.cli import main  # noqa: E402
from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.tabs.compare.compare_state import CompareState  # noqa: E402
from microrelease.core import load_sample  # noqa: E402
from microrelease.core.lattice.quality import QUALITY_MODELS  # noqa: E402

QI = "sex,age,race,marital-status,education"


def cli_preferred(policy: str, capsys) -> list[int]:
    assert main(["search", "--sample", "adult", "--qi", QI, "--k", "5", "--max-sup", "2%", "--policy", policy,
                 "--sensitive", "salary-class", "--l-diversity", "distinct:2", "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)["preferred"]["vector"]


def explorer() -> Explorer:
    e = Explorer(load_sample("adult", qi=tuple(QI.split(","))), k=5)
    e.max_sup = e.dataset.n_rows * 2 // 100
    return e


@pytest.mark.parametrize("policy_first", [True, False])
@pytest.mark.parametrize("policy", ["loss", "kl-divergence"])
def test_a_quality_policy_under_l_diversity_prefers_the_command_line_s_node(policy, policy_first, capsys):
    e = explorer()
    if policy_first:
        e.policy = policy
    e.sensitive_attribute, e.l_kind, e.l = "salary-class", "distinct", 2  # built here and now (no page)
    if not policy_first:
        e.policy = policy
    assert e.applied_models and e.profile.quality is not None and e.message == ""
    assert list(e.lattice.node(e.preferred)) == cli_preferred(policy, capsys)
    assert QUALITY_MODELS["loss"].name in e.quality(e.preferred)


def test_the_compare_tab_shows_loss_under_a_privacy_model_once_the_profile_has_it():
    e = explorer()
    s = CompareState(explorer=e)
    e.sensitive_attribute, e.l_kind, e.l = "salary-class", "distinct", 2
    s.pins = [int(e.preferred)]
    assert QUALITY_MODELS["loss"].label not in set(s.table()["figure"]) and "Loss" in s.quality_note()
    e.policy = "loss"
    s.pins = [int(e.preferred)]
    table = s.table()
    row = table[table["figure"] == QUALITY_MODELS["loss"].label]
    assert len(row) == 1 and s.quality_note() == ""
    loss = QUALITY_MODELS["loss"].score(e.profile, e.k)[e.preferred]
    assert row[s.vector(e.preferred)].iloc[0] == pytest.approx(loss)
    assert loss == min(QUALITY_MODELS["loss"].score(e.profile, e.k)[e.answer.satisfying])
