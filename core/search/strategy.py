"""Which search answers a question: the whole-lattice profile or the pruned search, chosen by cost.

The profile answers every (k, MaxSup, policy) question after one pass (what the dashboard's instant
changes of k rest on), but it costs what the whole lattice costs: its memory grows with the nodes times
the distinct class sizes of each. The pruned search costs what the answer costs, and one answer costs
it less at every lattice size measured (benchmarks/scale_qis.py). ``auto`` takes the pruned search for
one question, and for many questions on a lattice over ``PROFILE_NODES`` nodes, wherever it
answers them (every criterion of the registry, every policy); else the
profile, which is refused before any work when its estimate exceeds the memory budget, with the
estimate and the alternative.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.frequency import FrequencySource
from microrelease.core.lattice.policies import validate_policy
from microrelease.core.lattice.profile import STRATEGIES as PROFILE_KERNELS
from microrelease.core.search.answer import supports
from microrelease.core.search.evaluator import NodeEvaluator

STRATEGIES = ("auto", "profile", "pruned", *(s for s in PROFILE_KERNELS if s != "auto"))
PROFILE_NODES = 20_000  # up to here the profile's one pass costs about what one pruned answer costs
SAMPLED_NODES = 24  # nodes whose distinct class sizes estimate a profile's size


@dataclass(frozen=True)
class Choice:
    """``search``: "profile" or "pruned"; ``kernel``: the profile's (auto, numba, numpy, direct);
    ``estimate``: the profile's estimated bytes (0 when not estimated); ``reason``: why, in words."""

    search: str
    kernel: str
    estimate: int
    reason: str


def default_memory_budget() -> int:
    """Half the memory this process may have: the machine's, or its control group's limit if lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total // 2


def parse_bytes(text: str, parameter: str = "memory_budget") -> int:
    """``"2GB"``, ``"512MB"``, ``"1.5G"``, ``"100000"`` -> bytes (powers of 1024)."""
    units = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    raw = str(text).strip().lower().removesuffix("ib").removesuffix("b")
    number, unit = (raw[:-1], raw[-1]) if raw and raw[-1] in units else (raw, "")
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if not (np.isfinite(value) and value > 0):
        raise InvalidParameterError(f"The {parameter!r} parameter must be a size such as 2GB or 512MB. "
                                    f"Got {text!r} instead.", parameter=parameter)
    return int(value * units[unit])


def estimate_profile_bytes(source: FrequencySource, quality: bool) -> int:
    """The whole-lattice profile's estimated peak memory: nodes × the mean distinct class sizes of a
    sample of nodes (rolled up by the evaluator) × the bytes a (node, size) pair takes, plus the
    per-node arrays of a query."""

    lattice = source.lattice
    heights = np.array(lattice.heights, dtype=np.int64)
    rng = np.random.default_rng(0)
    evaluator = NodeEvaluator(source, cache_budget=64 << 20)
    pairs = []
    for target in np.linspace(0, heights.sum(), SAMPLED_NODES).round().astype(int):
        node = np.zeros(len(heights), dtype=np.int64)
        while node.sum() < target:  # a random node of that height
            open_ = np.flatnonzero(node < heights)
            node[rng.choice(open_)] += 1
        _, counts, _ = evaluator.classes(node)
        pairs.append(len(np.unique(counts)))
    m = len(heights)
    # sizes, counts, running sums and the roll-up's pieces (quality: the sums per QI, twice); measured on adult
    # with synthetic QIs (9-10 QIs) at 0.7-1.1x the peak it estimates
    per_pair = 128 + (48 * (m + 4) if quality else 0)
    per_node = 8 * (16 + 2 * m)  # offsets, figures, metrics, the grid and the edges
    return int(lattice.size * (float(np.mean(pairs)) * per_pair + per_node))


def choose(source: FrequencySource, policy: str, *, strategy: str = "auto", memory_budget: int | None = None,
           questions: int = 1) -> Choice:
    """The search for ``questions`` questions on ``source`` (see the module docstring): one question
    (a command) costs least by the pruned search at every lattice size measured; many (the dashboard)
    are answered after one pass by a profile that fits.
    Raises InvalidParameterError for ``pruned`` where it cannot answer, or for a profile whose estimate
    exceeds ``memory_budget`` (default: ``default_memory_budget``)."""

    if strategy not in STRATEGIES:
        raise InvalidParameterError(f"The 'strategy' parameter must be one of {STRATEGIES}. Got {strategy!r} "
                                    "instead.", parameter="strategy")
    quality = validate_policy(policy).reads_quality_profile
    prunable = supports(policy)
    if strategy == "pruned":
        if not prunable:
            raise InvalidParameterError(f"the pruned search does not answer the policy {policy!r} yet; use "
                                        "strategy 'profile'", parameter="strategy")
        return Choice("pruned", "", 0, "asked for")
    size = source.lattice.size
    if strategy == "auto" and prunable and (questions == 1 or size > PROFILE_NODES):
        return Choice("pruned", "", 0, "one question" if questions == 1 else
                      f"{size:,} nodes: more than the profile's {PROFILE_NODES:,}")
    kernel = "auto" if strategy in ("auto", "profile") else strategy
    budget = default_memory_budget() if memory_budget is None else int(memory_budget)
    estimate = estimate_profile_bytes(source, quality) if size > PROFILE_NODES or memory_budget is not None else 0
    if estimate > budget:
        alternative = ("or use strategy 'pruned'" if prunable else
                       "or use fewer QIs or lower hierarchies (the pruned search does not answer this question yet)")
        raise InvalidParameterError(f"the whole-lattice profile of {size:,} nodes would need about {_size(estimate)} "
                                    f"of memory, over the budget of {_size(budget)}; raise the budget, {alternative}",
                                    parameter="memory_budget")
    if strategy != "auto":
        reason = "asked for"
    elif not prunable:
        reason = f"the pruned search does not score {policy!r} yet"
    else:
        reason = f"{questions} questions on {size:,} nodes: the profile answers every one after one pass"
    return Choice("profile", kernel, estimate, reason)


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
