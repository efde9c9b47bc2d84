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
    allowed_hosts: tuple[str, ...]  # Host names answered besides the listening address (and loopback)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> AppRequest:
        table = TableRequest.from_args(args) if (args.data or args.qi) else None
        return cls(table, args.sample or "adult", args.host, args.port, args.show, tuple(args.allow_host))


Request = AppRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_table_options(p)  # the dashboard picks the sensitive attribute and the strategy itself
    add_identifier_option(p)
    add_hierarchy_options(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=5006, help="port (default 5006)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME[:PORT]",
                   help="also answer requests for this host name (repeatable), e.g. the name others type or a proxy "
                        "sends; without :PORT any port. Other names get 403 (DNS rebinding)")
    p.add_argument("--show", action="store_true", help="open a browser")


def run(request: AppRequest) -> int:
    from microrelease.app.serve import serve, served_hosts  # Panel is loaded only for this command

    served_hosts(request.host, request.port, request.allowed_hosts)  # a bad --allow-host before the data loads
    dataset = load(request.table) if request.table else None
    serve(host=request.host, port=request.port, sample=request.sample, dataset=dataset, show=request.show,
          allowed_hosts=request.allowed_hosts)
    return 0
