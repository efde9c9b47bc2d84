"""ARX's quality models under k-map: the classes with fewer than K population records are suppressed
whatever k is; every model at every node equals its definition written row by row (the population
counted by grouping it anew), on the compiled roll-up and on the node-by-node path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sweeps import sweep

from microrelease.core import load_dataset
from microrelease.core.lattice.quality import QUALITY_MODELS, optimum
from microrelease.core.lattice.search import query
from microrelease.core.risk.k_map import code_population, joint_profile

from quality_definitions import brute_force, random_table


def population_fails(population: pd.DataFrame, hierarchies, node, big_k):
    """Rows of the sample whose generalized combination has fewer than ``big_k`` population records."""
    generalized = pd.DataFrame({h.attribute: h.generalize(population[h.attribute], d)
                                for h, d in zip(hierarchies, node, strict=True)})
    counts = generalized.value_counts()

    def fails(gen: pd.DataFrame) -> np.ndarray:
        return np.array([counts.get(tuple(row), 0) < big_k for row in gen.itertuples(index=False)])
    return fails


@pytest.mark.parametrize("seed", sweep(range(4)))
def test_every_quality_model_under_k_map_equals_its_definition(seed):
    rng = np.random.default_rng(200 + seed)
    population, hierarchies = random_table(rng, int(rng.integers(20, 70)))
    sample = population.sample(frac=float(rng.uniform(0.2, 0.8)), random_state=seed)
    dataset = load_dataset(sample.reset_index(drop=True), qi=("age", "sex", "zip"),
                           hierarchies={h.attribute: h for h in hierarchies})
    coded = code_population(population, dataset)
    for strategy in ("numba", "numpy"):
        joint = joint_profile(dataset, coded, strategy=strategy)
        for big_k in (2, 4):
            profile = joint.profile(big_k, quality=True)
            for k in (1, 3):
                scores = {name: q.score(profile, k) for name, q in QUALITY_MODELS.items()}
                for i, node in enumerate(profile.lattice):
                    expected = brute_force(sample.reset_index(drop=True), hierarchies, node, k,
                                           fails=population_fails(population, hierarchies, node, big_k))
                    for name, value in expected.items():
                        assert scores[name][i] == pytest.approx(value, rel=1e-9, abs=1e-9), \
                            (strategy, big_k, name, node, k)


def test_a_quality_policy_under_k_map_is_the_best_satisfying_node():
    rng = np.random.default_rng(7)
    population, hierarchies = random_table(rng, 300)
    sample = population.sample(n=60, random_state=1).reset_index(drop=True)
    dataset = load_dataset(sample, qi=("age", "sex", "zip"), hierarchies={h.attribute: h for h in hierarchies})
    profile = joint_profile(dataset, code_population(population, dataset)).profile(5, quality=True)
    answer = query(profile, 1, 6)
    for name in ("loss", "nu-entropy", "kl-divergence"):
        best, _ = optimum(answer, name)
        figures = {node: brute_force(sample, hierarchies, node, 1,
                                     fails=population_fails(population, hierarchies, node, 5))[name]
                   for node, ok in zip(profile.lattice, answer.satisfying, strict=True) if ok}
        assert figures[profile.lattice.node(best)] == pytest.approx(min(figures.values()), rel=1e-9)
