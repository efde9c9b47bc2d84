"""The parser built from the command modules, and ``main``: one request per run, and the exit status.

Only a ``MicroreleaseError`` is the user's to fix: one line on stderr,
status 2. Anything else is a bug and surfaces with its traceback. Ctrl-C exits 130, SIGTERM 143 (both
after every ``finally`` has removed the temporary files), a closed pipe 141; ``check`` exits 1 for a
table that is not k-anonymous.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from microrelease.app.cli import __doc__ as doc
from microrelease.app.cli import (
    app_command,
    check_command,
    dp_command,
    microaggregate_command,
    release_command,
    risk_command,
    search_command,
    sequential_command,
)
from microrelease.app.cli.flags import error_line
from microrelease.core import MicroreleaseError

COMMANDS = (search_command, release_command, microaggregate_command, dp_command, sequential_command, app_command,
            check_command, risk_command)  # in the order --help lists them


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``finally`` runs (temporary files go)."""


_FINISHED = threading.Event()  # the command's work is over (written and committed): a SIGTERM now loses nothing
_LATE = threading.Event()  # a SIGTERM arrived after that


def _on_sigterm(signum, frame):  # noqa: ARG001 - the signal module's signature
    if _FINISHED.is_set():
        _LATE.set()  # said by entry(); raising now would turn a finished command into a traceback
        return
    raise Terminated()


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser, whose errors are one line naming the flag and the value (argparse prints its
    whole usage first: twenty lines above the one that says what is wrong), status 2."""

    def error(self, message: str) -> NoReturn:
        line = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {line} (see {self.prog} --help)\n")


def attach_values(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """``--max-sup -5%`` read as ``--max-sup=-5%``: argparse takes a value starting with ``-`` for a flag
    (unless it reads as a plain negative number) and says "expected one argument" without the value.
    A token after a flag that takes one value is that flag's value unless it is itself a flag."""
    argv = list(argv)
    if not argv or argv[0] not in _commands(parser):
        return argv
    flags = _commands(parser)[argv[0]]._option_string_actions
    out, i = argv[:1], 1
    while i < len(argv):
        token = argv[i]
        action = flags.get(token)
        following = argv[i + 1] if i + 1 < len(argv) else None
        if (action is not None and action.nargs is None and following is not None and following.startswith("-")
                and following not in flags and following.split("=", 1)[0] not in flags and following != "--"):
            out.append(f"{token}={following}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="microrelease", description=doc.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        p = sub.add_parser(command.NAME, help=command.HELP)
        command.add_arguments(p)
        p.set_defaults(module=command)
    return parser


def main(argv: Sequence[str] | None = None, *, keep_handler: bool = False) -> int:
    parser = build_parser()
    args = parser.parse_args(attach_values(parser, sys.argv[1:] if argv is None else argv))
    command = args.module
    previous = signal.getsignal(signal.SIGTERM)
    if command is not app_command:  # the server stops on SIGTERM as servers do; commands clean up first
        _FINISHED.clear()
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        request = command.Request.from_args(args)  # the one reading of the Namespace
        code = command.run(request)
        _FINISHED.set()
        return code
    except KeyboardInterrupt:
        print("microrelease: interrupted (SIGINT); temporary files removed, nothing left half-written", file=sys.stderr)
        return 130
    except Terminated:
        print("microrelease: terminated (SIGTERM); temporary files removed, nothing left half-written", file=sys.stderr)
        return 143
    except MicroreleaseError as exc:
        print(error_line(exc), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `... --json | head`: the reader left; nothing to say to it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    finally:
        if not keep_handler:
            signal.signal(signal.SIGTERM, previous)


def entry() -> int:
    """The console script: ``main``, whose SIGTERM handler stays in place to the process's end, so
    that a SIGTERM after the command finished is said (its output is complete), not a silent exit -15."""
    code = main(keep_handler=True)
    if _LATE.is_set():
        print(f"microrelease: SIGTERM received after the command had finished: its output is complete (exit {code})",
              file=sys.stderr)
    return code
