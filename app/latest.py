"""Work run off the page: ``Latest`` runs one kind of work on a worker thread and hands its
outcome back to the page."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from microrelease.core.exceptions import Cancelled

log = logging.getLogger(__name__)


class Latest:
    """Runs one kind of work (a profile build) on a worker thread and hands its outcome back to the
    page; a newer run supersedes the one before, which is stopped and whose outcome is dropped.

    ``hand_back(fn)`` runs ``fn`` where the page may be changed (a served page's event loop, under the
    document lock); without one, everything runs here and now (tests, notebooks).
    """

    def __init__(self, name: str):
        self.name = name  # the worker thread's
        self._run = 0
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()
        self._run += 1
        self._stop = threading.Event()

    def start(self, work: Callable, finish: Callable, progress: Callable[[float], None], hand_back=None) -> None:
        """``work(report, should_stop)`` computes an outcome (raising ``Cancelled`` when stopped);
        ``finish(outcome)`` and ``progress(fraction)`` (whole percents only) run on the page, unless a
        newer run started meanwhile. Served, an unexpected error is logged and ``finish(exc)`` shows it."""
        self.stop()
        run, stop, shown = self._run, self._stop, [0.0]

        def current(fn: Callable) -> Callable:
            return lambda *args: fn(*args) if run == self._run else None

        def report(fraction: float) -> None:
            if hand_back is None:
                current(progress)(fraction)
            elif fraction - shown[0] >= 0.01 or fraction == 1.0:
                shown[0] = fraction
                hand_back(lambda: current(progress)(fraction))

        def worker() -> None:
            try:
                outcome = work(report, stop.is_set)
            except Cancelled:
                return
            except Exception as exc:
                if hand_back is None:
                    raise
                log.exception("%s failed", self.name)
                outcome = exc
            if hand_back is None:
                current(finish)(outcome)
            else:
                hand_back(lambda: current(finish)(outcome))

        if hand_back is None:
            worker()
        else:
            threading.Thread(target=worker, name=self.name, daemon=True).start()
