"""What ``search`` and ``release`` share: their request (the table, the lattice question, the engine
and the privacy models), the one read of the rows (through the engine, or in memory under privacy
models) and the whole-lattice profile built from it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Self

from microrelease.app.cli.flags import FLAGS
from microrelease.app.cli.options import (
    EngineRequest,
    ModelRequest,
    QueryRequest,
    TableRequest,
    add_engine_options,
    add_hierarchy_options,
    add_identifier_option,
    add_model_options,
    add_query_options,
    add_quiet_option,
    add_sensitive_option,
    add_strategy_option,
    add_table_options,
)
from microrelease.app.cli.progress import progress_bar
from microrelease.core import POLICIES, Answer, Dataset, MicroreleaseError, build_profile, load_dataset, query
from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.engines.summary import TableSummary, summarize
from microrelease.core.lattice.profile import LatticeProfile
from microrelease.core.models.model_profile import MODEL_STRATEGIES, build_model_profile
from microrelease.core.models.privacy_model import PrivacyModel
from microrelease.core.models.sensitive import SensitiveFrequency, prepare_models
from microrelease.core.search import PrunedAnswer, search_pruned
from microrelease.core.search.strategy import Choice, choose, parse_bytes


def add_lattice_options(p: argparse.ArgumentParser) -> None:
    add_table_options(p)
    add_identifier_option(p)
    add_sensitive_option(p)
    add_hierarchy_options(p)
    add_strategy_option(p)
    add_quiet_option(p)
    add_query_options(p)
    add_engine_options(p)
    add_model_options(p)


@dataclass(frozen=True)
class LatticeRequest:
    """What a lattice command asks; a command's own request extends it with its fields."""

    table: TableRequest
    query: QueryRequest
    engine: EngineRequest
    models: ModelRequest | None  # None: k-anonymity alone
    strategy: str
    quiet: bool
    memory_budget: int | None  # bytes the whole-lattice profile may take (None: the default)
    time_limit: float | None  # seconds a pruned quality search may take

    @classmethod
    def from_args(cls, args: argparse.Namespace, **command_fields) -> Self:
        table = TableRequest.from_args(args)
        query = QueryRequest.from_args(args)
        models = ModelRequest.from_args(args)
        engine = EngineRequest.from_args(args, default="pandas" if models else "duckdb")
        if models and args.strategy not in (*MODEL_STRATEGIES, "profile", "pruned"):  # refused, not ignored
            raise MicroreleaseError(f"{args.strategy!r} is not a strategy of the profile under privacy models; "
                                    f"choose one of {', '.join(MODEL_STRATEGIES)}", parameter="strategy")
        budget = None if args.memory_budget is None else parse_bytes(args.memory_budget)
        return cls(table, query, engine, models, args.strategy, args.quiet, budget, args.time_limit, **command_fields)


@dataclass(frozen=True)
class Rows:
    """The rows as the lattice sees them; under privacy models also the sensitive attribute's
    frequency and the models, ready to check."""

    dataset: Dataset | TableSummary
    sensitive_frequency: SensitiveFrequency | None = None
    models: tuple[PrivacyModel, ...] = ()


def load(table: TableRequest, *, besides: str | None = None) -> Dataset:
    """The table in memory; ``besides``: a non-QI attribute whose hierarchy was given too."""
    hierarchies = {name: path for name, path in table.hierarchies.items() if name != besides}
    return load_dataset(table.path, qi=table.qi, hierarchies=hierarchies, hierarchy_dir=table.hierarchy_dir,
                        identifiers=table.identifiers, sensitive=table.sensitive, sep=table.sep)


def read_rows(request: LatticeRequest) -> Rows:
    table, engine, models = request.table, request.engine, request.models
    if models is not None:  # the models read every class's sensitive values: the table is held in memory
        dataset = load(table, besides=models.attribute)
        prepared = prepare_models(dataset, models.attribute, models.models,
                                  hierarchy=table.hierarchies.get(models.attribute))
        return Rows(dataset, prepared.sensitive_frequency, prepared.models)
    with progress_bar(f"reading rows ({engine.name})", request.quiet) as bar:
        return Rows(summarize(table.path, qi=table.qi, hierarchies=table.hierarchies,
                              hierarchy_dir=table.hierarchy_dir, identifiers=table.identifiers,
                              sensitive=table.sensitive, sep=table.sep, engine=engine.name,
                              engine_options=engine.options, progress=bar))


def build(rows: Rows, request: LatticeRequest, kernel: str | None = None) -> LatticeProfile:
    """The whole-lattice profile: every (k, MaxSup, policy) question is answered from it."""
    quality = POLICIES[request.query.policy].reads_quality_profile  # Loss, entropy, KL read it
    kernel = kernel or ("auto" if request.strategy in ("profile", "pruned") else request.strategy)
    if rows.models:
        with progress_bar("lattice profile with privacy models", request.quiet) as bar:
            return build_model_profile(rows.dataset, rows.sensitive_frequency, rows.models, strategy=kernel,
                                       progress=bar, quality=quality)
    with progress_bar("lattice profile", request.quiet) as bar:
        return build_profile(rows.dataset, strategy=kernel, progress=bar, quality=quality)


def criteria_of(rows: Rows, request: LatticeRequest, k_map=None) -> Criteria:
    """The question's privacy criteria: k, the models on the sensitive attribute, k-map, the risk limits."""
    return Criteria.of(request.query.k, *rows.models, *([k_map] if k_map is not None else []), *request.query.criteria,
                       sensitive=rows.sensitive_frequency)


def answer(rows: Rows, request: LatticeRequest, *, k_map=None,
           k_map_profile: Callable[[], LatticeProfile] | None = None,
           k_minimal: bool = True) -> tuple[Answer | PrunedAnswer, Choice]:
    """The question answered by the search chosen by cost (``microrelease.core.search.strategy.choose``):
    the whole-lattice profile (``k_map_profile`` builds it under ``k_map``) or the pruned search under
    every criterion, which also tags the whole lattice when ``k_minimal`` (the k-minimal set,
    Find_vector) is to be read."""
    q = request.query
    criteria = criteria_of(rows, request, k_map)
    choice = choose(rows.dataset, q.policy, strategy=request.strategy, memory_budget=request.memory_budget)
    if request.time_limit is not None and not POLICIES[q.policy].quality:
        raise MicroreleaseError(f"applies to a quality policy's search (the k-minimal set of {FLAGS['policy']} "
                                f"{q.policy} is exact or nothing)", parameter="time_limit")
    if choice.search == "pruned":
        with progress_bar("pruned search", request.quiet) as bar:
            pruned = search_pruned(rows.dataset, criteria, q.max_sup, q.policy, progress=bar,
                                   time_limit=request.time_limit)
            if (k_minimal and request.time_limit is None) or not POLICIES[q.policy].quality:
                pruned.k_minimal_indices  # noqa: B018 - tag the whole lattice under the bar
        pruned.search.progress = None
        return pruned, choice
    if request.time_limit is not None:
        raise MicroreleaseError(f"applies to the pruned search, and this question is answered by the whole-lattice "
                                f"profile ({choice.reason})", parameter="time_limit")
    profile = k_map_profile() if k_map_profile is not None else build(rows, request, choice.kernel)
    return query(profile, q.k, q.max_sup, q.criteria), choice
