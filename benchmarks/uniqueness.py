"""Population uniqueness estimators against the truth, and their speed over the adult lattice.

Populations (the truth is counted): ``census`` (100,000 records, four skewed independent QIs),
``pitman-yor`` (100,000 draws from a Pitman-Yor distribution, theta = 2000, alpha = 0.5: Pitman's
model holds) and ``adult`` (the bundled 30,162 records over its 8 QIs as the population). For each
sampling fraction, --samples simple random samples are drawn; the table gives, per estimator, the
median estimate of population uniques and the median, smallest and largest relative error, and the
same for the sample uniques that are population uniques (estimated as pi * estimate).

Then the time to estimate every node of the 8-QI adult lattice from its profile (median of --repeat
runs, wall and CPU; the profile itself is not timed), and Benedetti-Franconi's expected
re-identifications for every node.

Run: python benchmarks/uniqueness.py [--samples 10] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from microrelease.core import build_profile, load_sample
from microrelease.core.risk.individual import reidentifications_by_node
from microrelease.core.risk.uniqueness import MODELS, uniqueness_by_node

FRACTIONS = (0.01, 0.1, 0.5)


def census(seed=11, n=100_000):
    rng = np.random.default_rng(seed)

    def zipf(k, s):
        w = 1.0 / np.arange(1, k + 1) ** s
        return rng.choice(k, size=n, p=w / w.sum())

    age = np.clip(rng.normal(40, 15, n).round(), 0, 89).astype(int)
    codes = np.stack([age, rng.integers(0, 2, n), zipf(50, 1.0), zipf(20, 0.8)], axis=1)
    return np.unique(codes, axis=0, return_inverse=True)[1].ravel()


def pitman_yor(seed=12, n=100_000, theta=2000.0, alpha=0.5, atoms=2_000_000):
    rng = np.random.default_rng(seed)
    v = rng.beta(1 - alpha, theta + alpha * np.arange(1, atoms + 1))
    w = v * np.exp(np.concatenate(([0.0], np.cumsum(np.log1p(-v))[:-1])))
    w = np.append(w, max(1 - w.sum(), 0.0))
    labels = rng.choice(atoms + 1, size=n, p=w / w.sum())
    tail = labels == atoms
    labels[tail] = atoms + 1 + np.arange(tail.sum())
    return labels


def adult(dataset):
    freq = dataset.frequency
    return np.repeat(np.arange(len(freq.counts)), freq.counts)


def accuracy(name, labels, samples):
    """Rows of the table for one population: every fraction, every estimator."""
    population_sizes = np.bincount(labels)
    truth = int((population_sizes == 1).sum())
    rows = []
    for fraction in FRACTIONS:
        n = int(round(fraction * len(labels)))
        hists, in_sample = [], []
        for seed in range(samples):
            picked = labels[np.random.default_rng(seed).choice(len(labels), n, replace=False)]
            classes, sizes = np.unique(picked, return_counts=True)
            in_sample.append(int(((sizes == 1) & (population_sizes[classes] == 1)).sum()))
            hists.append(np.unique(sizes, return_counts=True))
        offsets = np.concatenate(([0], np.cumsum([len(s) for s, _ in hists])))
        sizes = np.concatenate([s for s, _ in hists])
        counts = np.concatenate([c for _, c in hists])
        for model in MODELS:
            res = uniqueness_by_node(offsets, sizes, counts, fraction, model=model)
            err = res.uniques / truth - 1
            err_in = fraction * res.uniques / np.array(in_sample) - 1
            chosen = ",".join(f"{m}:{k}" for m, k in zip(*np.unique(res.model, return_counts=True), strict=True))
            rows.append((name, fraction, n, truth, model, np.median(res.uniques), err, int(np.median(in_sample)),
                         err_in, int((~res.converged).sum()), chosen if model == "dankar" else ""))
    return rows


def timed(fn, repeat):
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    dataset = load_sample("adult")
    print(f"# population uniques: estimate vs truth, {args.samples} samples per fraction "
          "(relative error: median [smallest, largest])")
    print(f"{'population':<11} {'pi':>5} {'n':>6} {'true U':>7} {'model':<7} {'estimate':>9} "
          f"{'rel. error':>24} {'true SU&PU':>10} {'pi*U vs SU&PU':>24} {'none':>4}  dankar chose")
    for name, labels in (("census", census()), ("pitman-yor", pitman_yor()), ("adult", adult(dataset))):
        for (pop, fraction, n, truth, model, median, err, in_sample, err_in, none, chosen) in accuracy(
                name, labels, args.samples):
            def span(e):
                e = e[np.isfinite(e)]
                return f"{np.median(e):+6.0%} [{e.min():+5.0%}, {e.max():+5.0%}]" if len(e) else "n/a"
            print(f"{pop:<11} {fraction:>5.0%} {n:>6} {truth:>7} {model:<7} {median:>9.0f} {span(err):>24} "
                  f"{in_sample:>10} {span(err_in):>24} {none:>4}  {chosen}")

    profile = build_profile(dataset)
    pairs = len(profile.sizes)
    print(f"\n# every node of the adult lattice ({len(dataset.quasi_identifiers)} QIs, {profile.lattice.size} nodes, "
          f"{pairs} (size, count) pairs); median of {args.repeat} runs, profile not timed")
    print(f"{'what':<34} {'pi':>5} {'wall ms':>8} {'cpu ms':>8} {'no estimate':>12}")
    for fraction in FRACTIONS:
        for model in MODELS:
            res = uniqueness_by_node(profile.offsets, profile.sizes, profile.counts, fraction, model=model)
            wall, cpu = timed(lambda m=model, f=fraction: uniqueness_by_node(
                profile.offsets, profile.sizes, profile.counts, f, model=m), args.repeat)
            print(f"{'uniqueness ' + model:<34} {fraction:>5.0%} {wall * 1e3:>8.1f} {cpu * 1e3:>8.1f} "
                  f"{int((~res.converged).sum()):>12}")
        wall, cpu = timed(lambda f=fraction: reidentifications_by_node(
            profile.offsets, profile.sizes, profile.counts, f), args.repeat)
        print(f"{'Benedetti-Franconi re-identif.':<34} {fraction:>5.0%} {wall * 1e3:>8.1f} {cpu * 1e3:>8.1f}")


if __name__ == "__main__":
    main()
