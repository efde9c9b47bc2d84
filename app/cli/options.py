"""The option groups the commands share, each defined once beside the typed part of a request it
parses into: the input (a file or a bundled sample), the table's columns and hierarchies, the
lattice question, the engine, the privacy models and the output.

A command adds the groups it needs to its parser and calls their ``from_args`` once; from there on
only the frozen requests travel, never the argparse Namespace, and nothing changes the Namespace.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microrelease.app.cli.flags import FLAGS
from microrelease.core import POLICIES, InvalidParameterError, MicroreleaseError
from microrelease.core.criteria.criterion import Scope, Statistic
from microrelease.core.criteria.registry import parse_criteria, spec_parameters
from microrelease.core.data.samples import SAMPLES, sample
from microrelease.core.engines import ENGINES, output_format
from microrelease.core.models.model_profile import MODEL_STRATEGIES
from microrelease.core.models.privacy_model import PrivacyModel
from microrelease.core.search.strategy import STRATEGIES as SEARCH_STRATEGIES

# --- parsing helpers and argparse types ------------------------------------------------------


def split(text: str | None) -> tuple[str, ...]:
    """'A, B,,C' -> ('A', 'B', 'C')."""
    return tuple(t.strip() for t in text.split(",") if t.strip()) if text else ()


def node_levels(text: str | None) -> tuple[int, ...] | None:
    """``--node 0,4,1`` -> (0, 4, 1); None when not given. An empty item is refused with the rest: dropped,
    it would shift the levels onto the wrong QIs."""
    if not text:
        return None
    items = [t.strip() for t in text.split(",")]
    try:
        if "" in items:
            raise ValueError
        return tuple(int(x) for x in items)
    except ValueError:
        raise InvalidParameterError(f"expects levels like 0,4,1; got {text!r}", parameter="node") from None


def columns(text: str | None, parameter: str) -> tuple[str, ...]:
    """A column list A,B,... (the value of the flag of ``parameter``), each column once: a name given
    twice is refused naming the flag and the value (pandas would group on the column twice, or keep
    it once, and a report would count it twice)."""
    names = split(text)
    repeated = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if repeated is not None:
        raise InvalidParameterError(f"column {repeated!r} is given twice in {text!r}; give each column once",
                                    parameter=parameter)
    return names


def pairs(items: Sequence[str], flag: str) -> dict[str, str]:
    """['A=x', 'B=y'] -> {'A': 'x', 'B': 'y'}; refuses an item that is not NAME=VALUE, and a NAME given
    twice (the last would win silently)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise MicroreleaseError(f"{flag} expects NAME=VALUE, got {item!r}")
        if name.strip() in out:
            raise MicroreleaseError(f"{flag} gives {name.strip()!r} twice ({out[name.strip()]!r} and {value.strip()!r}); "
                                    "give each name once")
        out[name.strip()] = value.strip()
    return out


def separator(text: str) -> str:
    """argparse type of --sep / --out-sep: one character that can separate CSV fields."""
    if len(text) != 1 or text in "\"\r\n":
        raise argparse.ArgumentTypeError(f"must be one character, not a quote or a line break. Got {text!r} instead.")
    return text


SEED_HELP = ("seed of the random draws, for tests and teaching only: anyone who knows the seed can undo the "
             "protection (default: the operating system's entropy)")


def warn_if_seeded(seed: int | None) -> None:
    """A seeded release says so where its maker reads (the reports say ``seeded: true``)."""
    if seed is not None:
        print(f"microrelease: warning: {FLAGS['rng']} {seed}: anyone who knows the seed can undo the protection; "
              "use it for tests and teaching only", file=sys.stderr)


def non_negative(text: str) -> int:
    """argparse type of --seed (what NumPy's generators accept), --list-suppressed and --limit."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"must be a non-negative integer. Got {text!r} instead.")
    return int(text)


def port_number(text: str) -> int:
    """argparse type of --port: a TCP port a server can listen on, 1..65535."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535. Got {text!r} instead.")
    return int(text)


# --- the input: a file, or a bundled sample whose defaults fill what was left out ------------------


def add_input_options(p: argparse.ArgumentParser, samples: Sequence[str], *, data_help: str, sample_help: str) -> None:
    p.add_argument("data", nargs="?", help=data_help)
    p.add_argument("--sample", choices=sorted(samples), help=sample_help)
    p.add_argument("--sep", type=separator, default=None, help="field separator of DATA (default: detected)")


def resolve_input(args: argparse.Namespace, load_sample: Callable[[str], Any]) -> tuple[str | Path, Any]:
    """The input path, and the bundled sample (None for a file) whose defaults fill what the user
    left out. The one place where "DATA or --sample" is decided."""
    if args.sample and args.data:
        raise MicroreleaseError(f"give either DATA or {FLAGS['sample']}, not both")
    if args.sample:
        chosen = load_sample(args.sample)
        return chosen.path, chosen
    if not args.data:
        raise MicroreleaseError(f"no data: give a CSV file or {FLAGS['sample']} NAME")
    return args.data, None


# --- the table of the lattice commands: columns and hierarchies -----------------------------------


def add_hierarchy_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hierarchy", action="append", default=[], metavar="A=PATH", help="ARX hierarchy file of QI A")
    p.add_argument("--hierarchy-dir", help="folder with *_hierarchy_A.csv or A.csv per QI")


def add_table_options(p: argparse.ArgumentParser, samples: Sequence[str] = tuple(SAMPLES),
                      sample_help: str = "use a bundled sample data set with its hierarchies") -> None:
    """The input and its quasi-identifiers: what every table command reads (``samples``: the --sample choices)."""
    add_input_options(p, samples, data_help="CSV or Parquet file, folder of partitions or glob (or use --sample)",
                      sample_help=sample_help)
    p.add_argument("--qi", help="quasi-identifiers A,B,... in this order (vectors follow it)")


def add_identifier_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--identifier", default="", help="identifier columns C,D: dropped from every output")


def add_sensitive_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sensitive", default="", help="sensitive column(s)")


def add_strategy_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strategy", default="auto", choices=list(SEARCH_STRATEGIES),
                   help="auto: the pruned search for one question (every criterion, every policy), else the "
                        "whole-lattice profile where it fits; profile / pruned: force one; numba, numpy, "
                        f"direct: the profile with that kernel (under privacy models: one of "
                        f"{', '.join(MODEL_STRATEGIES)})")
    p.add_argument("--memory-budget", metavar="SIZE",
                   help="memory the whole-lattice profile may take, e.g. 4GB (default: half the machine's); a "
                        "profile estimated above it is refused before any work")
    p.add_argument("--time-limit", type=positive_seconds, metavar="SECONDS",
                   help="search, quality policy with a lower bound (loss, precision, height, nu-entropy): stop after "
                        "this long with the best node found and a proven bound on how far the optimum can be below it")


def positive_seconds(text: str) -> float:
    """argparse type of --time-limit: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds. Got {text!r} instead.")
    return value


def add_quiet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress bar")


@dataclass(frozen=True)
class TableRequest:
    """The input of a lattice command: where the rows are, the columns' roles, the hierarchies."""

    path: str | Path
    qi: tuple[str, ...]
    identifiers: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    sep: str | None = None
    hierarchies: Mapping[str, str] = field(default_factory=dict)  # QI -> ARX file, from --hierarchy
    hierarchy_dir: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TableRequest:
        path, chosen = resolve_input(args, sample)
        qi = columns(args.qi, "quasi_identifiers") or (chosen.qi if chosen else ())
        if not qi:
            raise MicroreleaseError(f"{FLAGS['quasi_identifiers']} is required: the quasi-identifier columns, in order")
        hierarchy_dir = getattr(args, "hierarchy_dir", None) or (str(chosen.folder) if chosen else None)
        # a command without --identifier / --sensitive / --hierarchy leaves them empty
        return cls(path, qi, columns(getattr(args, "identifier", ""), "identifiers"),
                   columns(getattr(args, "sensitive", ""), "sensitive"), args.sep,
                   pairs(getattr(args, "hierarchy", []), FLAGS["hierarchies"]), hierarchy_dir)

    @property
    def inputs(self) -> list[str | Path]:
        """The files a release must never overwrite or hold: the data and the explicit hierarchies."""
        return [self.path, *self.hierarchies.values()]


# --- the lattice question: k, MaxSup, the preference policy ------------------------------------


def add_query_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--k", type=int, required=True, help="every released QI combination has >= k rows")
    p.add_argument("--max-sup", default="0", help="MaxSup: rows that may be suppressed (N) or a share (1%%)")
    p.add_argument("--policy", default="min-relative", choices=sorted(POLICIES), help="preference policy")
    p.add_argument("--weights", action="append", default=[], metavar="A=2,B=1",
                   help=f"weights for --policy {' / '.join(_weighted_policies())}")
    g = p.add_argument_group("risk-based privacy models (over the released classes)")
    for parameter, classes in spec_parameters(scope=Scope.RELEASE).items():  # from the core's registry
        g.add_argument(FLAGS[parameter], dest=parameter, metavar=classes[0].syntax,
                       help=f"{classes[0].help}; e.g. {classes[0].example}")


@dataclass(frozen=True)
class QueryRequest:
    k: int
    max_sup: str
    policy: str
    weights: Mapping[str, float] = field(default_factory=dict)
    criteria: tuple = ()  # the scope-RELEASE criteria (risk limits)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> QueryRequest:
        criteria = parse_criteria({p: getattr(args, p) for p in spec_parameters(scope=Scope.RELEASE)})
        return cls(args.k, args.max_sup, args.policy, _weights(args.weights, args.policy), criteria)


def _weights(items: Sequence[str], policy: str) -> dict[str, float]:
    """The --weights; refused when the policy does not use them, rather than ignored."""
    flag, policy_flag = FLAGS["weights"], FLAGS["policy"]
    weights = {}
    for name, value in pairs([part for item in items for part in split(item)], flag).items():
        try:
            weights[name] = float(value)
        except ValueError:
            raise MicroreleaseError(f"{flag}: the weight of {name!r} must be a number, got {value!r}") from None
    if weights and not POLICIES[policy].uses_weights:
        raise MicroreleaseError(f"{flag} applies to {policy_flag} {' / '.join(_weighted_policies())} only, "
                                f"not {policy_flag} {policy}")
    return weights


def _weighted_policies() -> list[str]:
    return sorted(name for name, p in POLICIES.items() if p.uses_weights)


# --- the engine that makes the one pass over the rows -----------------------------------------------


def add_engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine (the one pass over the rows)")
    g.add_argument("--engine", default=None, choices=sorted(ENGINES),
                   help="duckdb: files read in place, larger than memory (default); pandas: in memory; "
                        "dask: on a Dask cluster")
    g.add_argument("--memory-limit", help="duckdb: memory limit such as 2GB (default: DuckDB's, 80%% of RAM)")
    g.add_argument("--spill-dir", help="duckdb: folder for what does not fit in memory (default: a temporary one)")
    g.add_argument("--threads", type=int, help="duckdb: threads (default: all cores)")
    g.add_argument("--scheduler", help="dask: scheduler address tcp://host:8786 (default: a local cluster)")


@dataclass(frozen=True)
class EngineRequest:
    name: str
    options: Mapping[str, object] = field(default_factory=dict)  # the engine's own keywords

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, default: str = "duckdb") -> EngineRequest:
        name, engine = args.engine or default, FLAGS["engine"]
        if args.scheduler and name != "dask":
            raise MicroreleaseError(f"{FLAGS['scheduler']} applies to {engine} dask, not {engine} {name}")
        duckdb = {"memory_limit": args.memory_limit, "spill_dir": args.spill_dir, "threads": args.threads}
        if name == "duckdb":
            return cls(name, duckdb)
        ignored = [FLAGS[option] for option, value in duckdb.items() if value]
        if ignored:
            verb = "applies" if len(ignored) == 1 else "apply"
            raise MicroreleaseError(f"{', '.join(ignored)} {verb} to {engine} duckdb, not {engine} {name}")
        return cls(name, {"scheduler": args.scheduler} if name == "dask" else {})


# --- privacy models on the sensitive attribute: the flags come from the core's registry -------------


def add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(f"privacy models on the {FLAGS['sensitive']} attribute (beside k-anonymity)",
                             "a hierarchical ground distance reads the attribute's hierarchy from "
                             f"{FLAGS['hierarchies']} / {FLAGS['hierarchy_dir']}")
    for parameter, classes in spec_parameters(needs=Statistic.VALUE_COUNTS).items():
        forms = [f"{cls.syntax} ({cls.name})" for cls in classes]
        g.add_argument(FLAGS[parameter], dest=parameter, metavar="SPEC",
                       help=f"{', '.join(forms)}; e.g. {classes[0].example}")


@dataclass(frozen=True)
class ModelRequest:
    """Privacy models asked for on the one sensitive attribute (checked against its values later)."""

    attribute: str
    models: tuple[PrivacyModel, ...]

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ModelRequest | None:
        """None when no model is asked for (k-anonymity alone)."""
        models = spec_parameters(needs=Statistic.VALUE_COUNTS)
        specs = {parameter: getattr(args, parameter) for parameter in models if getattr(args, parameter)}
        if not specs:
            return None
        flags = " / ".join(FLAGS[parameter] for parameter in models)
        sensitive = columns(args.sensitive, "sensitive")
        if len(sensitive) != 1:
            raise MicroreleaseError(f"{flags} need exactly one {FLAGS['sensitive']} attribute")
        if args.engine not in (None, "pandas"):
            raise MicroreleaseError(f"{flags} run in memory: use {FLAGS['engine']} pandas (or leave "
                                    f"{FLAGS['engine']} out)")
        return cls(sensitive[0], parse_criteria(specs))


# --- what a writing command writes --------------------------------------------------------------------


def add_output_options(p: argparse.ArgumentParser, *, out_help: str, folder: bool = False) -> None:
    p.add_argument("-o", "--out", required=True, help=out_help)
    if not folder:
        p.add_argument("--out-sep", type=separator, default=None, help="field separator of a CSV output (default ,)")
    what = "a new or empty output folder" if folder else "the output file"
    p.add_argument("--force", action="store_true",
                   help=f"replace a previous release of microrelease at {what}; nothing else is ever overwritten")
    p.add_argument("--escape-formulas", action="store_true",
                   help="write text cells that a spreadsheet would run as formulas (=, +, -, @, tab, CR) with a "
                        "leading ' (recorded in the report)")
    p.add_argument("--json", action="store_true",
                   help="print the report (always written beside the output as .report.json, with a page a "
                        "person reads and prints, .report.html)")


@dataclass(frozen=True)
class OutputRequest:
    path: str
    sep: str
    force: bool
    escape_formulas: bool
    json: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, parquet: bool = False) -> OutputRequest:
        """``parquet``: the command writes Parquet for an output named .parquet / .pq."""
        sep = getattr(args, "out_sep", None)
        parent = Path(args.out).parent  # a mistyped folder is refused, not created
        if not parent.is_dir():
            problem = f"{parent} is not a folder" if parent.exists() else \
                f"the folder {parent} does not exist; create it first"
            raise MicroreleaseError(f"-o {args.out}: {problem} (nothing was written)")
        if sep is not None and parquet and output_format(args.out) == "parquet":  # no separator to set
            raise MicroreleaseError(f"{FLAGS['out_sep']} applies to a CSV output, not to the Parquet file {args.out}")
        return cls(args.out, "," if sep is None else sep, args.force, args.escape_formulas, args.json)


# --- k-map against a population table (search, release) --------------------------------------------


def add_k_map_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("k-map against a population table (El Emam & Dankar)")
    g.add_argument("--k-map", type=int, metavar="K",
                   help="every released class has >= K records in the population table (needs --population)")
    g.add_argument("--population", metavar="FILE",
                   help="CSV of the population the data was drawn from (same QI columns; it contains the data)")


@dataclass(frozen=True)
class KMapRequest:
    k: int
    population: str
    strategy: str = "numba"  # the joint roll-up's (core.risk.k_map.STRATEGIES)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> KMapRequest | None:
        """None without either flag; one without the other, or K below 1, is refused naming the flag."""
        k, population = args.k_map, args.population
        if k is not None and population is None and getattr(args, "sample", None):
            chosen = sample(args.sample).population_path  # a bundled sample may know its population
            population = str(chosen) if chosen else None
        if k is None and population is None:
            return None
        if population is None:
            raise MicroreleaseError(f"{FLAGS['k_map']} needs {FLAGS['population']} FILE (the population table)")
        if k is None:
            raise MicroreleaseError(f"{FLAGS['population']} needs {FLAGS['k_map']} K (the population records "
                                    "each released class needs)")
        if k < 1:
            raise InvalidParameterError(f"must be an integer >= 1. Got {k!r} instead.", parameter="k_map")
        # the searches, or the kernel of the profile's roll-up (joint, or with the models) when it answers
        strategy = {"auto": "numba", "profile": "numba", "pruned": "numba", "numba": "numba",
                    "numpy": "numpy"}.get(getattr(args, "strategy", "auto"))
        if strategy is None:
            raise InvalidParameterError(f"{args.strategy!r} is not a strategy under k-map; choose auto, profile, pruned, "
                                        "numba or numpy", parameter="strategy")
        return cls(k, population, strategy)
