"""Each measurement in a fresh process, so that one run's memory and caches do not colour the next.

A benchmark script calls itself with ``--child TASK`` (TASK as JSON); the child prints its figures as
one JSON line, which the parent reads.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable


def parse_as_parent(parser: argparse.ArgumentParser, child: Callable[[dict], dict]) -> argparse.Namespace | None:
    """The parent's arguments; None in a child process, after it ran its task and printed its figures."""
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.child:
        return args
    print(json.dumps(child(json.loads(args.child))))
    return None


def in_fresh_process(script: str, task: dict, *, python: str = sys.executable, errors: str = "raise") -> dict:
    """The figures of ``task`` run by ``script --child`` in a new ``python`` process.

    ``errors="report"`` returns ``{"error": last stderr line}`` for a failed run instead of raising.
    """
    done = subprocess.run([python, script, "--child", json.dumps(task)], capture_output=True, text=True,
                          check=errors == "raise")
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])
