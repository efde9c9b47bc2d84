"""``microrelease app``: serve the dashboard (on the bundled adult sample, another sample, or DATA)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from microrelease.app.cli.flags import FLAGS
from microrelease.app.cli.lattice import load
from microrelease.app.cli.options import (
    TableRequest,
    add_hierarchy_options,
    add_identifier_option,
    add_table_options,
    columns,
    port_number,
)
from microrelease.app.wide import GENERATED, SEED
from microrelease.core import Dataset, MicroreleaseError, load_sample
from microrelease.core.data.samples import SAMPLES
from microrelease.core.risk.k_map import code_population, read_population

NAME = "app"
HELP = "serve the dashboard (opens on the bundled adult sample)"


@dataclass(frozen=True)
class AppRequest:
    table: TableRequest | None  # None: the dashboard opens on ``sample`` with its own columns
    sample: str
    host: str
    port: int
    show: bool
    allowed_hosts: tuple[str, ...]  # Host names answered besides the listening address (and loopback)
    population: str | None = None  # a population table for k-map (a bundled sample may know its own)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> AppRequest:
        columns(args.identifier, "identifiers")  # a column named twice is refused with or without DATA
        table = TableRequest.from_args(args) if (args.data or args.qi) else None
        ignored = [FLAGS[name] for name, given in (("identifiers", args.identifier), ("hierarchies", args.hierarchy),
                                                   ("hierarchy_dir", args.hierarchy_dir)) if given]
        if table is None and ignored:  # the sample opens with its own roles and hierarchies: refused, not ignored
            verb = "applies" if len(ignored) == 1 else "apply"
            raise MicroreleaseError(f"{' / '.join(ignored)} {verb} to DATA or {FLAGS['quasi_identifiers']} only (a "
                                    "sample opens with its own columns and hierarchies)")
        return cls(table, args.sample or "adult", args.host, args.port, args.show, tuple(args.allow_host),
                   args.population)


Request = AppRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    # the dashboard picks the sensitive attribute and the strategy itself
    add_table_options(p, (*SAMPLES, *GENERATED),
                      sample_help="use a bundled sample data set with its hierarchies, or a generated one: wide12 is "
                                  f"adult with 3 synthetic QIs (seed {SEED}; 12 QIs, a lattice of 349,920 nodes, "
                                  "answered by the pruned search)")
    add_identifier_option(p)
    add_hierarchy_options(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=5006, help="port (default 5006)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME[:PORT]",
                   help="also answer requests for this host name (repeatable), e.g. the name others type or a proxy "
                        "sends; without :PORT any port. Other names get 403 (DNS rebinding)")
    p.add_argument("--show", action="store_true", help="open a browser")
    p.add_argument("--population", metavar="FILE",
                   help="CSV of the population the data was drawn from (same QI columns; it contains the data): "
                        "enables k-map in the sidebar (adult-sample knows its own)")


def run(request: AppRequest) -> int:
    from microrelease.app.serve import serve, served_hosts  # Panel is loaded only for this command

    served_hosts(request.host, request.port, request.allowed_hosts)  # a bad --allow-host before the data loads
    dataset = load(request.table) if request.table else None
    population = (given_population(request.population, dataset or load_sample(request.sample))
                  if request.population else None)  # the sample is loaded by the page, not twice here
    serve(host=request.host, port=request.port, sample=request.sample, dataset=dataset, show=request.show,
          allowed_hosts=request.allowed_hosts, population=population)
    return 0


def given_population(path: str | None, dataset: Dataset):
    """The --population table, read and checked against ``dataset`` before serving (refused naming the flag)."""
    if path is None:
        return None
    from microrelease.app.explorer.population import PopulationTable  # heavy: panel

    table = read_population(path)
    code_population(table, dataset, source=path)  # a missing column or value, or a smaller population
    return PopulationTable(table, path)
