"""The dashboard's privacy-criteria parameters and sidebar boxes are generated from the core's registry:
a criterion registered there (here a fake one, for this test only) gets its sidebar group, boxes checked
against its declared bounds, and its spec in the Explorer's criteria, with no app code touched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

pytest.importorskip("panel")

from microrelease.app.explorer.criteria_params import groups  # noqa: E402
from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.explorer.sidebar import Sidebar  # noqa: E402
from microrelease.app.main import sample_with_profile  # noqa: E402
from microrelease.core.criteria import registry  # noqa: E402
from microrelease.core.criteria.controls import Control, control  # noqa: E402
from microrelease.core.criteria.criterion import Scope, Statistic  # noqa: E402
from microrelease.core.risk.reidentification import node_risk, table_risk  # noqa: E402

LIMIT = Control("max_highest_risk", "highest risk at most (0 = off)", float, 0.0, low=0, high=1, step=0.05, off=0.0)


@dataclass(frozen=True)
class HighestRisk:
    """A fake release criterion: the highest prosecutor risk of the released records at most ``limit``."""

    limit: float = control(LIMIT)
    name: ClassVar[str] = "highest-risk"
    parameter: ClassVar[str] = "max_highest_risk"
    syntax: ClassVar[str] = "R"
    example: ClassVar[str] = "0.5"
    scope: ClassVar[Scope] = Scope.RELEASE
    monotone_generalization: ClassVar[bool] = False
    monotone_suppression: ClassVar[bool] = False

    @classmethod
    def from_spec(cls, spec: str) -> HighestRisk:
        return cls(float(spec))

    def spec(self) -> str:
        return repr(self.limit)

    def describe(self) -> str:
        return f"highest risk <= {self.limit:g}"

    def needs(self) -> frozenset[Statistic]:
        return frozenset({Statistic.RELEASED_SIZES})

    def figure(self, profile, k: int) -> np.ndarray:
        return node_risk(profile, k, threshold=1.0)["highest"]

    def table_figure(self, sizes) -> float:
        return table_risk(sizes, threshold=1.0).highest

    def satisfies(self, profile, k: int) -> np.ndarray:
        return self.figure(profile, k) <= self.limit + 1e-12

    def satisfies_value(self, value: float) -> bool:
        return bool(value <= self.limit + 1e-12)


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(registry.CRITERIA, HighestRisk.name, HighestRisk)
    # an Explorer class of this test's own: the parameter the fake declares is added to it, not to Explorer
    return type("ExplorerWithHighestRisk", (Explorer,), {})


def test_the_generated_groups_are_the_registry_s_parameters_but_k():
    assert list(groups()) == [p for p in registry.spec_parameters() if p != "k"]
    assert [c.name for c in groups()["l_diversity"].every] == ["l_kind", "l", "c"]
    assert Explorer.param["l_kind"].objects == ["none", "distinct", "entropy", "recursive"]
    assert Explorer.param["c"].inclusive_bounds == (False, True)  # c > 0, as the model checks


def test_a_registered_criterion_gets_its_sidebar_group_and_reaches_the_explorer_s_criteria(registered):
    explorer = registered(*sample_with_profile("samarati"), k=2)
    sidebar = Sidebar(state=explorer)
    group = sidebar.groups["max_highest_risk"]
    box = sidebar.boxes["max_highest_risk"]
    assert box in group.objects and "max-highest-risk-value" in box.css_classes and box.label == LIMIT.label
    assert group in sidebar.risk_models.objects  # a criterion on the release: beside the risk limits
    assert explorer.criteria() == ()  # 0: off
    before = explorer.answer.satisfying.copy()

    box.value = 2.0  # outside its declared bounds: refused, with the message of every box
    assert explorer.max_highest_risk == 0.0 and "was not applied" in sidebar.input_message.object

    box.value = 0.25
    assert explorer.criteria() == (HighestRisk(0.25),)
    assert explorer.answer.criteria == (HighestRisk(0.25),)  # the question re-asked under it
    highest = node_risk(explorer.profile, 2, threshold=1.0)["highest"]
    assert (explorer.answer.satisfying == (before & (highest <= 0.25))).all()
    assert explorer.answer.satisfying.sum() < before.sum()
