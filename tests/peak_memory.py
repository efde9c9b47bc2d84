"""Run a module as ``python -m`` would and write its own peak resident memory (kB) to the file named by
$PEAK_MEMORY_FILE at exit.

A child's ``ru_maxrss`` from ``wait4`` is no measure of the child alone: Linux keeps the high-water mark
across ``exec``, and the child of a fork (or vfork) starts from its parent's mappings, so a command
spawned by a large pytest process reports pytest's peak. ``VmHWM`` belongs to the process's own memory
map, which ``exec`` replaces.

Usage: python tests/peak_memory.py MODULE [ARGS...]
"""

from __future__ import annotations

import atexit
import os
import runpy
import sys


def _write_peak() -> None:
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["PEAK_MEMORY_FILE"], "w") as out:
        out.write(peak)


if __name__ == "__main__":
    module, sys.argv = sys.argv[1], sys.argv[1:]
    atexit.register(_write_peak)
    runpy.run_module(module, run_name="__main__", alter_sys=True)
