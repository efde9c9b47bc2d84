"""The privacy-model registry's contract: every model class declares what the registry needs, every
model class in core is registered, errors name parameters; and the models made ready for a
sensitive attribute (prepare_models) with its frequency computed once."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

import microrelease.core.models as models_package
from microrelease.core import (
    CRITERIA,
    Hierarchy,
    InvalidParameterError,
    PrivacyModel,
    build_model_profile,
    load_dataset,
    parse_criteria,
    prepare_models,
    sensitive_frequency,
)
from microrelease.core.criteria.registry import parse_criterion as parse_model
from microrelease.core.criteria.registry import spec_parameters
from microrelease.core.models.l_diversity import DistinctLDiversity
from microrelease.core.models.model_rollup_kernels import KERNEL_KINDS
from microrelease.core.models.privacy_model import KernelCode, Statistic
from microrelease.core.models.t_closeness import GROUNDS, TCloseness

PRIVACY_MODELS = {name: cls for name, cls in CRITERIA.items() if issubclass(cls, PrivacyModel)}
TABLE = pd.DataFrame({"zip": ["1", "1", "1", "2", "2", "2", "3", "3", "4", "4"],
                      "secret": ["a", "b", "c", "a", "a", "b", "c", "c", "a", "d"]})
ZIP = Hierarchy("zip", (("1", "1-2", "*"), ("2", "1-2", "*"), ("3", "3-4", "*"), ("4", "3-4", "*")))
SECRET = Hierarchy("secret", (("a", "ab", "*"), ("b", "ab", "*"), ("c", "cd", "*"), ("d", "cd", "*")))


def small_dataset():
    return load_dataset(TABLE, qi=["zip"], hierarchies={"zip": ZIP}, sensitive=["secret"])


def model_classes_in_core() -> set[type]:
    """Every concrete PrivacyModel subclass defined in microrelease.core (models package imported whole)."""
    for info in pkgutil.iter_modules(models_package.__path__):
        importlib.import_module(f"{models_package.__name__}.{info.name}")

    def below(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)

    return {c for c in below(PrivacyModel) if c.__module__.startswith("microrelease.core.") and not inspect.isabstract(c)}


def test_every_privacy_model_class_is_in_the_registry():
    assert model_classes_in_core() == set(PRIVACY_MODELS.values()) and len(PRIVACY_MODELS) == 4


@pytest.mark.parametrize("name", sorted(PRIVACY_MODELS))
def test_registered_class_declares_what_the_registry_needs(name):
    cls = PRIVACY_MODELS[name]
    assert cls.name == name and issubclass(cls, PrivacyModel)
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    assert isinstance(cls.monotone_generalization, bool) and isinstance(cls.monotone_suppression, bool)
    assert cls in spec_parameters()[cls.parameter] and cls.syntax and cls.example
    model = parse_model(cls.parameter, cls.example)
    assert type(model) is cls
    assert parse_model(cls.parameter, model.spec()) == model  # the text spec round-trips
    assert eval(repr(model), {cls.__name__: cls}) == model  # noqa: S307 - our own repr
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.t = 1  # type: ignore[misc]
    assert model.bind(sensitive_frequency(small_dataset(), "secret", SECRET)).validate(4, "'secret'") is not None
    assert Statistic.VALUE_COUNTS in model.needs() and model.needs() <= set(Statistic)
    assert isinstance(model.kernel_code(), KernelCode) and isinstance(model.kernel_code().kind, int)
    assert isinstance(model.describe(), str) and model.describe()
    counts = np.array([[3.0, 0, 0, 1], [1, 1, 1, 1], [0, 2, 0, 0]])
    table = counts.sum(axis=0)
    assert model.satisfies_counts(counts, table).dtype == bool and model.statistic(counts, table).shape == (3,)


@pytest.mark.parametrize("name", sorted(PRIVACY_MODELS))
def test_registered_model_runs_compiled_as_its_numpy_check(name):
    cls = PRIVACY_MODELS[name]
    ds = small_dataset()
    sf = sensitive_frequency(ds, "secret", SECRET)
    model = parse_model(cls.parameter, cls.example)
    compiled = build_model_profile(ds, sf, [model], strategy="numba")
    oracle = build_model_profile(ds, sf, [model], strategy="numpy")
    for key in ("offsets", "sizes", "counts", "failing_rows"):
        np.testing.assert_array_equal(getattr(compiled, key), getattr(oracle, key))
    assert oracle.failing_rows.any()  # the example constrains this table


def test_kernel_kind_codes_are_distinct():
    models = [parse_model(cls.parameter, cls.example) for cls in PRIVACY_MODELS.values()]
    models += [TCloseness(0.5, g) for g in GROUNDS]
    kinds = {(type(m), getattr(m, "ground", None)): m.kernel_code().kind for m in models}
    assert len(set(kinds.values())) == len(kinds)
    assert set(kinds.values()) == KERNEL_KINDS  # a branch in the kernel for each, and none left over


def test_a_kind_the_kernel_has_no_branch_for_is_refused_before_it_runs():
    """Once the last branch was a catch-all: an unknown kind ran as hierarchical EMD of height 0, and
    every class passed."""

    @dataclasses.dataclass(frozen=True)
    class Unbranched(DistinctLDiversity):
        kind: ClassVar[int] = max(KERNEL_KINDS) + 1

    ds = small_dataset()
    sf = sensitive_frequency(ds, "secret")
    with pytest.raises(NotImplementedError, match=f"kind code {Unbranched.kind}, which it has no branch for"):
        build_model_profile(ds, sf, [Unbranched(3)], strategy="numba")
    # the numpy walk runs the model's own check: the profile of the model it copies
    plain = build_model_profile(ds, sf, [Unbranched(3)], strategy="numpy")
    np.testing.assert_array_equal(plain.failing_rows,
                                  build_model_profile(ds, sf, [DistinctLDiversity(3)], strategy="numba").failing_rows)
    assert plain.failing_rows.any()
    # the default strategy takes that walk by itself: a new model needs no kernel branch to be profiled
    auto = build_model_profile(ds, sf, [Unbranched(3)])
    np.testing.assert_array_equal(auto.failing_rows, plain.failing_rows)
    assert auto.strategy == plain.strategy


@pytest.mark.parametrize(("parameter", "spec", "named"), [
    ("l_diversity", "distinct:0", "'l'"),
    ("l_diversity", "entropy:9", "l = 9 is larger than the 4 distinct values"),
    ("l_diversity", "recursive:0:2", "'c'"),
    ("l_diversity", "many:3", "'l_diversity' parameter expects distinct:L, entropy:L or recursive:C:L"),
    ("t_closeness", "1.5", "'t'"),
    ("t_closeness", "0.2:far", "'ground'"),
    ("t_closeness", "zero", "'t_closeness' parameter expects T[:equal|ordered|hierarchical]"),
])
def test_bad_model_errors_name_the_parameter_never_a_flag(parameter, spec, named):
    ds = small_dataset()
    with pytest.raises(InvalidParameterError) as caught:
        prepare_models(ds, "secret", {parameter: spec})
    assert named in str(caught.value) and "--" not in str(caught.value)
    assert caught.value.parameter == parameter


def test_hierarchical_ground_without_a_hierarchy_is_named():
    with pytest.raises(InvalidParameterError, match="hierarchical t-closeness needs a hierarchy for 'secret'") as caught:
        prepare_models(small_dataset(), "secret", {"t_closeness": "0.2:hierarchical"})
    assert caught.value.parameter == "t_closeness" and "--" not in str(caught.value)


def test_parse_models_keeps_the_order_and_skips_empty_specs():
    assert parse_criteria({"t_closeness": "0.3", "l_diversity": None}) == (TCloseness(0.3),)
    models = parse_criteria({"l_diversity": "recursive:2.5:2", "t_closeness": "0.2:ordered"})
    assert [m.describe() for m in models] == ["recursive (2.5, 2)-diversity", "0.2-closeness (ordered distance)"]


def test_prepare_models_reads_the_sensitive_hierarchy_only_when_needed(tmp_path):
    from microrelease.core import write_arx

    write_arx(SECRET, tmp_path / "secret.csv")
    ds = load_dataset(TABLE, qi=["zip"], hierarchies={"zip": ZIP}, sensitive=["secret"])
    plain = prepare_models(ds, "secret", {"l_diversity": "distinct:2", "t_closeness": "0.4"},
                           hierarchy=tmp_path / "secret.csv")
    assert plain.sensitive_frequency.hierarchy is None and [type(m).__name__ for m in plain.models] == \
        ["DistinctLDiversity", "TCloseness"]
    for given in (tmp_path / "secret.csv", str(tmp_path / "secret.csv"), SECRET):
        sensitive, (model,) = prepare_models(ds, "secret", {"t_closeness": "0.4:hierarchical"}, hierarchy=given)
        assert sensitive.hierarchy.rows == SECRET.rows and model.hierarchy is sensitive.hierarchy
        assert model.order == tuple(SECRET.index[v] for v in sensitive.labels)
    # by default the attribute's file in the dataset's hierarchy folder
    write_arx(ZIP, tmp_path / "zip.csv")
    in_folder = load_dataset(TABLE, qi=["zip"], hierarchy_dir=tmp_path, sensitive=["secret"])
    sensitive, (model,) = prepare_models(in_folder, "secret", [TCloseness(0.4, "hierarchical")])
    assert sensitive.hierarchy.rows == SECRET.rows and model.order == tuple(SECRET.index[v] for v in sensitive.labels)


def test_prepared_models_give_the_profile_of_the_models_built_by_hand():
    from microrelease.core import read_arx
    from microrelease.core.data.samples import sample
    from microrelease.core.lattice.hierarchies import find_hierarchy_file
    from microrelease.core.models.l_diversity import EntropyLDiversity

    adult_sample = sample("adult")
    ds = load_dataset(adult_sample.path, qi=["age", "sex", "race"], hierarchy_dir=adult_sample.folder,
                      sensitive=["occupation"])
    sensitive, models = prepare_models(ds, "occupation", {"l_diversity": "entropy:2",
                                                          "t_closeness": "0.3:hierarchical"})
    h = read_arx(find_hierarchy_file(adult_sample.folder, "occupation"), "occupation")
    by_hand = [EntropyLDiversity(2.0), TCloseness(0.3, "hierarchical", h, tuple(h.index[v] for v in sensitive.labels))]
    ours, theirs = build_model_profile(ds, sensitive, models), build_model_profile(ds, sensitive, by_hand)
    for key in ("offsets", "sizes", "counts", "failing_rows"):
        np.testing.assert_array_equal(getattr(ours, key), getattr(theirs, key))


def test_the_sensitive_frequency_is_computed_once_per_dataset_and_attribute(monkeypatch):
    from microrelease.core.models import sensitive as sensitive_module

    calls = []
    real = sensitive_module.as_text
    monkeypatch.setattr(sensitive_module, "as_text", lambda column: calls.append(column.name) or real(column))
    ds = small_dataset()
    first = prepare_models(ds, "secret", {"l_diversity": "distinct:2"}).sensitive_frequency
    assert prepare_models(ds, "secret", {"t_closeness": "0.5"}).sensitive_frequency is first
    assert sensitive_frequency(ds, "secret") is first and calls == ["secret"]
    other = small_dataset()  # another table: its own frequency
    assert sensitive_frequency(other, "secret") is not first and calls == ["secret", "secret"]
    assert sensitive_frequency(ds, "secret", SECRET) is not first  # a hierarchy is checked against the values
