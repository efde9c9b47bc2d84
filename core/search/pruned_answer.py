"""One (k, MaxSup, policy) question answered by the pruned search (``flash``)."""

from __future__ import annotations

from collections.abc import Callable

from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.frequency import FrequencySource
from microrelease.core.lattice.policies import validate_policy
from microrelease.core.search.answer import PrunedAnswer, supports
from microrelease.core.search.bounds import AT_MINIMAL, BOUNDED, QualityConstants
from microrelease.core.search.evaluator import CACHE_BUDGET, NodeEvaluator
from microrelease.core.search.flash import PrunedSearch
from microrelease.core.search.memory import SearchMemory
from microrelease.core.validation import parse_max_sup, validate_k


def search_pruned(source: FrequencySource, k: int | Criteria, max_sup: int | str, policy: str = "min-relative", *,
                  evaluator: NodeEvaluator | None = None, progress: Callable[[float], None] | None = None,
                  should_stop: Callable[[], bool] | None = None, time_limit: float | None = None,
                  cache_budget: int = CACHE_BUDGET, memory: SearchMemory | None = None) -> PrunedAnswer:
    """Answer (k, MaxSup) for k-anonymity with minimal required suppression without the whole-lattice
    profile. A quality ``policy`` is searched for at once (its optimum over every satisfying node); the
    k-minimal set and Find_vector are tagged when first asked for.

    k : k, or a ``Criteria`` (k-anonymity and any other
        criteria of the registry: the l-diversities, t-closeness, k-map, the risk limits).

    evaluator : a ``NodeEvaluator`` of ``source`` to reuse (its cache stays warm across questions).
    memory : a ``SearchMemory`` of ``source``'s lattice, shared by
        the questions asked of one evaluator: what earlier searches learnt of k-anonymity tags this
        search's nodes before it evaluates any (a k change evaluates only the nodes left open), and what
        this one learns is added.
    time_limit : seconds (counted once the kernels are loaded) after which the search of a quality policy
        with a lower bound stops with the best node found so far (``timed_out``, ``lower_bound``); the
        k-minimal set and Find_vector, when asked for, are still exact (they are not timed).

    Parameters
    ----------
    source : FrequencySource
        A ``Dataset`` or a ``TableSummary``.
    k : int or Criteria
        The k of k-anonymity, or the criteria.
    max_sup : int or str
        MaxSup: a count or a percentage.
    policy : str, default "min-relative"
        A key of ``POLICIES``.
    evaluator : NodeEvaluator, optional
        An evaluator to reuse.
    progress : callable, optional
        Called with the fraction done.
    should_stop : callable, optional
        Polled; when it returns true the search raises ``Cancelled``.
    time_limit : float, optional
        Seconds after which the search stops with what it has.
    cache_budget : int, default 268435456
        Bytes of rolled-up frequency sets kept for reuse.
    memory : SearchMemory, optional
        What earlier searches decided.

    Returns
    -------
    PrunedAnswer
        The answer, as far as the search went.
    """
    criteria = k if isinstance(k, Criteria) else None
    k = validate_k(criteria.k.k if criteria is not None else k, source.n_rows)
    if criteria is not None and criteria.models and getattr(source.frequency, "row_tuple", None) is None:
        raise InvalidParameterError("privacy models read every row's sensitive value: they need a Dataset",
                                    parameter="models")
    max_sup = parse_max_sup(max_sup, source.n_rows)
    chosen = validate_policy(policy)
    if not supports(policy):
        raise InvalidParameterError(f"the pruned search does not score the policy {policy!r} yet; use the "
                                    "whole-lattice profile (strategy 'profile')", parameter="policy")
    if time_limit is not None and policy not in BOUNDED:
        raise InvalidParameterError(f"a time limit needs a quality policy with a lower bound (one of {sorted(BOUNDED)}), "
                                    f"to say how far the best node found can be from the optimum; got {policy!r}",
                                    parameter="time_limit")
    evaluator = evaluator or NodeEvaluator(source, cache_budget=cache_budget)
    constants = QualityConstants.of(source)
    search = PrunedSearch(evaluator, k, max_sup, quality=policy if chosen.quality else None, constants=constants,
                          progress=progress, should_stop=should_stop, time_limit=time_limit, criteria=criteria,
                          memory=memory)
    if policy in AT_MINIMAL:
        search.classify_all()
        for index in search.minimal():
            search.score(int(index))
    elif chosen.quality:
        search.run()
    return PrunedAnswer(source.lattice, search, criteria.release_scoped if criteria is not None else ())
