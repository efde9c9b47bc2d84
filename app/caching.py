"""Figures computed once for every session of the served app: ``computed_once`` caches a figure; a
caller asking for a figure being computed waits for that computation instead of computing it again (on
2 cores that would double the wait). The values can be handed to another process (``export_caches`` /
``seed_caches``: the warm-up child's figures fill the server's caches)."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

_CACHES: dict[str, Callable] = {}  # every computed_once function, by module-qualified name


def computed_once(maxsize: int) -> Callable[[Callable], Callable]:
    """Like ``functools.lru_cache(maxsize)`` (positional arguments), and one computation per
    arguments at a time; the values can be handed to another process (``export``/``seed``)."""

    def wrap(fn: Callable) -> Callable:
        values: OrderedDict = OrderedDict()
        locks: dict[tuple, threading.Lock] = {}  # one per arguments asked for (a handful per figure)
        guard = threading.Lock()

        def keep(args: tuple, value) -> None:  # under guard
            values[args] = value
            values.move_to_end(args)
            while len(values) > maxsize:
                values.popitem(last=False)

        @functools.wraps(fn)
        def call(*args):
            with guard:
                if args in values:
                    values.move_to_end(args)
                    return values[args]
                lock = locks.setdefault(args, threading.Lock())
            with lock:
                with guard:
                    if args in values:
                        return values[args]
                value = fn(*args)
                with guard:
                    keep(args, value)
                return value

        def seed(entries: Sequence[tuple[tuple, object]]) -> None:
            """Keep values computed elsewhere, for arguments not computed here already."""
            with guard:
                for args, value in entries:
                    if args not in values:
                        keep(args, value)

        call.export = lambda: list(values.items())
        call.seed = seed
        _CACHES[f"{fn.__module__}.{fn.__qualname__}"] = call
        return call

    return wrap


def export_caches() -> dict[str, list]:
    """Every computed_once value of this process, by function."""
    return {name: entries for name, fn in _CACHES.items() if (entries := fn.export())}


def seed_caches(exported: dict[str, list]) -> None:
    for name, entries in exported.items():
        if name in _CACHES:
            _CACHES[name].seed(entries)
