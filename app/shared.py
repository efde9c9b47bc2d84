"""Figures shared by every session of the served app, computed once per process.

``serve`` computes the tabs' figures on a thread while the first session may already ask for them:
with a plain ``lru_cache`` both would compute the same figure (on 2 cores, doubling the first
page's wait). Here a caller asking for a figure being computed waits for that computation instead;
different figures are still computed at the same time.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable


def computed_once(maxsize: int) -> Callable[[Callable], Callable]:
    """Like ``functools.lru_cache(maxsize)``, and one computation per arguments at a time."""

    def wrap(fn: Callable) -> Callable:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        locks: dict[tuple, threading.Lock] = {}  # one per arguments asked for (a handful per figure)
        guard = threading.Lock()

        @functools.wraps(fn)
        def call(*args):
            with guard:
                lock = locks.setdefault(args, threading.Lock())
            with lock:
                return cached(*args)

        call.cache_info = cached.cache_info
        return call

    return wrap
