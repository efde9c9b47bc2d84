"""The criterion protocol's contract: every criterion of the registry declares what the protocol asks
and its text spec round-trips; every criterion class in core is registered and has its command-line
flag; what a criterion declares about monotonicity holds on random tables (checked node by node
through the release's own suppression); k-map with l-diversity in one release equals brute force."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microrelease.core as core_package
from microrelease.core import CRITERIA, Criteria, InvalidParameterError, KAnonymity, load_dataset
from microrelease.core.criteria.controls import CONTROL, controls_of, keyword
from microrelease.core.criteria.criterion import ClassView, Criterion, Scope, Statistic, monotone
from microrelease.core.criteria.registry import control_groups, flag, parse_criterion, spec_parameters
from microrelease.core.lattice.node_release import node_suppression
from microrelease.core.models.sensitive import sensitive_frequency
from microrelease.core.risk.k_map import KMap, code_population

from brute import all_nodes, below, class_counter, level_maps
from strategies import random_cases


@pytest.mark.parametrize("name", sorted(CRITERIA))
def test_every_criterion_declares_the_protocol_and_its_spec_round_trips(name):
    cls = CRITERIA[name]
    assert cls.name == name and dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    criterion = parse_criterion(cls.parameter, cls.example)
    assert type(criterion) is cls and isinstance(criterion, Criterion)
    assert isinstance(cls.scope, Scope) and isinstance(cls.monotone_generalization, bool)
    assert isinstance(cls.monotone_suppression, bool) and cls.syntax and cls.describe is not None
    assert criterion.needs() and criterion.needs() <= set(Statistic)
    assert parse_criterion(cls.parameter, criterion.spec()) == criterion
    assert criterion.describe() and cls in spec_parameters()[cls.parameter]
    if cls.scope is Scope.CLASS:
        assert callable(criterion.satisfies) and Statistic.RELEASED_SIZES not in criterion.needs()
    else:
        assert callable(criterion.table_figure) and callable(criterion.satisfies_value)
        assert criterion.needs() == {Statistic.RELEASED_SIZES}


@pytest.mark.parametrize("name", sorted(CRITERIA))
def test_every_criterion_s_controls_compose_its_spec(name):
    """What a front end generates from the declarations (the dashboard's boxes) gives the criterion back:
    its example's values in its group's controls compose a spec parsed into the example."""
    cls = CRITERIA[name]
    criterion = parse_criterion(cls.parameter, cls.example)
    group = control_groups()[cls.parameter]
    values = {c.name: c.default for c in group.every}
    values |= {f.metadata[CONTROL].name: getattr(criterion, f.name) for f in dataclasses.fields(cls)
               if CONTROL in f.metadata}
    if group.selector is not None:
        assert values[group.selector.name] == "none" and group.spec(values) is None  # off by default
        values[group.selector.name] = keyword(cls)
    assert controls_of(cls) and parse_criterion(cls.parameter, group.spec(values)) == criterion
    for c in controls_of(cls):  # a default within its bounds; "off" turns the group off
        assert (c.low is None or c.default >= c.low) and (c.high is None or c.default <= c.high)
        if c.off is not None:
            assert group.spec({**values, c.name: c.off}) is None


def test_a_control_s_name_is_of_one_group():
    owners: dict[str, str] = {}
    for parameter, group in control_groups().items():
        for c in group.every:
            assert owners.setdefault(c.name, parameter) == parameter, c.name


def _criterion_classes_in_core() -> set[type]:
    """Every concrete class defined in microrelease.core that declares a scope (what makes a criterion)."""
    found = set()
    for info in pkgutil.walk_packages(core_package.__path__, f"{core_package.__name__}."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (cls.__module__ == module.__name__ and isinstance(getattr(cls, "scope", None), Scope)
                    and not inspect.isabstract(cls)):
                found.add(cls)
    return found


def test_every_criterion_class_in_core_is_registered_and_has_its_flag():
    from microrelease.app.cli.flags import FLAGS
    from microrelease.app.cli.run import build_parser

    assert _criterion_classes_in_core() == set(CRITERIA.values())
    helps = {name: build_parser()._subparsers._group_actions[0].choices[name].format_help()  # noqa: SLF001
             for name in ("search", "release")}
    for parameter in spec_parameters():
        assert FLAGS[parameter] == flag(parameter)
        for name, text in helps.items():
            assert flag(parameter) in text, (parameter, name)


def test_bad_specs_and_sets_are_refused_by_name():
    with pytest.raises(InvalidParameterError) as caught:
        parse_criterion("k", "five")
    assert caught.value.parameter == "k"
    with pytest.raises(InvalidParameterError, match="no privacy criterion is given by a parameter 'l'"):
        parse_criterion("l", "3")
    with pytest.raises(InvalidParameterError, match="read a sensitive attribute") as caught:
        Criteria.of(2, parse_criterion("l_diversity", "distinct:2"))
    assert caught.value.parameter == "sensitive"
    with pytest.raises(InvalidParameterError, match="k-map needs a population table"):
        Criteria.of(2, KMap(3))
    with pytest.raises(InvalidParameterError, match="not a criterion of the registry besides k-anonymity"):
        Criteria.of(2, KAnonymity(3))
    with pytest.raises(InvalidParameterError, match="average-risk given twice"):
        Criteria.of(2, parse_criterion("max_risk", "0.1"), parse_criterion("max_risk", "0.2"))


@st.composite
def labelled_cases(draw):
    """A random table with a sensitive column and a population holding it (the table plus extra rows)."""
    case = draw(random_cases(max_rows=20))
    secret = draw(st.lists(st.sampled_from("abc"), min_size=len(case.table), max_size=len(case.table)))
    extra = draw(st.lists(st.sampled_from(case.table), max_size=15))
    return case, secret, extra


def _setup(case, secret, extra):
    frame = case.frame().assign(secret=secret)
    ds = load_dataset(frame, qi=case.names, hierarchies=case.hierarchies(), sensitive=["secret"])
    population = code_population(pd.DataFrame([*case.table, *extra], columns=case.names), ds)
    return ds, sensitive_frequency(ds, "secret"), population


def _class_criteria(population):
    return [parse_criterion("l_diversity", "distinct:2"), parse_criterion("l_diversity", "entropy:1.5"),
            parse_criterion("l_diversity", "recursive:2:2"), parse_criterion("t_closeness", "0.3"),
            parse_criterion("t_closeness", "0.4:ordered"), KMap(2, population)]


@settings(max_examples=60, deadline=None)
@given(labelled_cases(), st.integers(1, 4))
def test_declared_monotonicity_holds_node_by_node(data, k):
    """A criterion declaring monotone_generalization: at MaxSup 0 its satisfying nodes are closed
    upwards; one declaring monotone_suppression: at every MaxSup too (Samarati's Lemma 5.1 for k)."""
    case, secret, extra = data
    ds, sf, population = _setup(case, secret, extra)
    k = min(k, ds.n_rows)
    nodes = all_nodes(case.heights)
    for criterion in [None, *_class_criteria(population)]:
        chosen = Criteria.of(k, *([criterion] if criterion else []), sensitive=sf)
        suppressed = {v: int(s.sizes[s.suppressed].sum()) for v in nodes
                      if (s := node_suppression(ds, v, chosen)) is not None}
        for max_sup in sorted({0, *suppressed.values()}):
            if not monotone(chosen.all, max_sup):
                continue
            ok = {v: suppressed[v] <= max_sup for v in nodes}
            for u in nodes:
                for v in nodes:
                    if ok[u] and below(u, v):
                        assert ok[v], (criterion, max_sup, u, v)


@settings(max_examples=60, deadline=None)
@given(labelled_cases(), st.integers(1, 4), st.integers(1, 6))
def test_k_map_with_l_diversity_suppresses_the_classes_brute_force_finds(data, k, big_k):
    case, secret, extra = data
    ds, sf, population = _setup(case, secret, extra)
    k = min(k, ds.n_rows)
    big_k = min(big_k, population.n_rows)
    l_div = parse_criterion("l_diversity", "distinct:2")
    chosen = Criteria.of(k, l_div, KMap(big_k, population), sensitive=sf)
    maps = [level_maps(rows) for rows in case.hierarchy_rows]
    everyone = [*case.table, *extra]
    for v in all_nodes(case.heights):
        s = node_suppression(ds, v, chosen)
        sample, pop = class_counter(case.table, maps, v), class_counter(everyone, maps, v)
        values: dict = {}
        for row, value in zip(case.table, secret, strict=True):
            values.setdefault(tuple(maps[i][d][x] for i, (x, d) in enumerate(zip(row, v, strict=True))), set()).add(value)
        expected = sum(n for key, n in sample.items() if n < k or pop[key] < big_k or len(values[key]) < 2)
        assert int(s.sizes[s.suppressed].sum()) == expected, v


def test_class_view_says_which_statistic_was_not_counted():
    view = ClassView(np.array([3, 1]))
    assert list(KAnonymity(2).satisfies(view)) == [True, False]
    with pytest.raises(ValueError, match="without the population"):
        KMap(2).satisfies(view)
