"""``microrelease check``: is a file k-anonymous over some columns? Exit 0 yes, 1 no; lists the
smallest classes."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from microrelease.app.cli.flags import FLAGS
from microrelease.app.cli.options import TableRequest, add_table_options, non_negative
from microrelease.app.text import plural
from microrelease.core import check_k_anonymity, read_table
from microrelease.core.exceptions import DataError, InvalidParameterError

NAME = "check"
HELP = "is a file k-anonymous over some columns? lists the smallest classes"


@dataclass(frozen=True)
class CheckRequest:
    table: TableRequest
    k: int
    limit: int
    json: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CheckRequest:
        if args.k < 1:  # every table is "0-anonymous": such a check would always pass
            raise InvalidParameterError(f"The '{FLAGS['k']}' option must be at least 1. Got {args.k} instead.")
        return cls(TableRequest.from_args(args), args.k, args.limit, args.json)


Request = CheckRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_table_options(p)  # only the QIs: no identifier, sensitive or hierarchy enters the check
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--limit", type=non_negative, default=10, help="how many smallest classes to list")
    p.add_argument("--json", action="store_true")


def run(request: CheckRequest) -> int:
    path, qi = request.table.path, request.table.qi
    table = read_table(path, sep=request.table.sep)
    if len(table) == 0:  # no rows is no evidence of anonymity
        raise DataError(f"{path} has a header but no rows: nothing to check")
    result = check_k_anonymity(table, qi, request.k, limit=request.limit)
    if request.json:
        print(json.dumps(result.to_dict(request.limit), indent=2))
    else:
        verdict = "is" if result.is_k_anonymous else "is NOT"
        print(f"{path} {verdict} {request.k}-anonymous over {', '.join(qi)} ({plural(result.n_rows, 'row')}, "
              f"{plural(result.n_classes, 'class', 'classes')})")
        if request.limit:  # --limit 0: the verdict alone
            print("smallest classes:")
            print(result.smallest_classes.to_string(index=False))
    return 0 if result.is_k_anonymous else 1
