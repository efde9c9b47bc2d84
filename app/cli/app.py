"""``microrelease app``: serve the dashboard (on the bundled adult sample, another sample, or DATA)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from microrelease.app.cli.lattice import load
from microrelease.app.cli.options import (
    TableRequest,
    add_hierarchy_options,
    add_identifier_option,
    add_table_options,
    port_number,
)

NAME = "app"
HELP = "serve the dashboard (opens on the bundled adult sample)"


@dataclass(frozen=True)
class AppRequest:
    table: TableRequest | None  # None: the dashboard opens on ``sample`` with its own columns
    sample: str
    host: str
    port: int
    show: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> AppRequest:
        table = TableRequest.from_args(args) if (args.data or args.qi) else None
        return cls(table, args.sample or "adult", args.host, args.port, args.show)


Request = AppRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_table_options(p)  # the dashboard picks the sensitive attribute and the strategy itself
    add_identifier_option(p)
    add_hierarchy_options(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=5006, help="port (default 5006)")
    p.add_argument("--show", action="store_true", help="open a browser")


def run(request: AppRequest) -> int:
    from microrelease.app.serve import serve  # Panel is loaded only for this command

    dataset = load(request.table) if request.table else None
    serve(host=request.host, port=request.port, sample=request.sample, dataset=dataset, show=request.show)
    return 0
