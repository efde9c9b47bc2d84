"""What the served app's sessions share in one process: figures computed once, compiled kernels, the
warm-up that prepares both off the first page's path, and :class:`Latest`, work run off the page.

``computed_once`` caches a figure for every session; a caller asking for a figure being computed
waits for that computation instead of computing it again (on 2 cores that would double the wait).

The numba kernels are compiled once per machine (numba's on-disk cache); a first-ever run has none.
``kernel_strategy`` says whether a family of kernels can run without compiling; when it cannot, the
app takes the numpy path of the same computation (the kernels' test oracle: identical results),
which is faster than compiling first on the small tables the app runs on. :class:`WarmUp` then
compiles the kernels and computes the other tabs' figures in one child process at the lowest CPU
priority, started once the first page is shown; its figures fill this process's caches.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from microrelease.core.exceptions import Cancelled

log = logging.getLogger(__name__)
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


# --- work off the page ----------------------------------------------------------------------------
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


# --- compiled kernels ----------------------------------------------------------------------------
def _ready(kernel, signatures: int, ndim: int | None = None) -> bool:
    """Whether numba ``kernel`` runs without compiling: ``signatures`` compiled in this process, or
    found in numba's on-disk cache (fresh for the source); with ``ndim``, one whose second argument
    (the classes' counts) has that many dimensions. Reads numba's cache index (not public API):
    anything unexpected answers False, and the caller takes the numpy path."""
    def fits(found) -> bool:
        found = list(found)
        if ndim is None:
            return len(found) >= signatures
        return any(getattr(sig[1], "ndim", None) == ndim for sig in found)

    if fits(kernel.signatures):
        return True
    try:
        return fits(key[0] for key in kernel._cache._cache_file._load_index())
    except Exception:  # another numba, no cache: compile as before
        return False


def _kernels(family: str) -> list[tuple]:
    """(kernel, signatures[, ndim of the counts]) the ``family`` runs. The profile kernel has two
    signatures: 1-D row counts (k-anonymity) and 2-D columns (everything a class carries beside)."""
    if family in ("lattice", "models", "quality", "k-map"):
        from microrelease.core.lattice.rollup_kernels import roll
        from microrelease.core.lattice.walk_kernel import walk_profile

        if family == "lattice":
            return [(walk_profile, 1, 1), (roll, 1)]
        return [(walk_profile, 1, 2), (roll, 2)]
    if family == "mdav":
        from microrelease.core.micro.mdav_kernels import mdav

        return [(mdav, 1)]
    if family == "uniqueness":
        from microrelease.core.risk.histograms import node_totals, snb_classes, zayatz_sums
        from microrelease.core.risk.uniqueness_kernels import pitman_fit, snb_solve

        return [(node_totals, 1), (zayatz_sums, 1), (snb_classes, 1), (snb_solve, 1), (pitman_fit, 1)]
    raise ValueError(f"unknown kernel family {family!r}")


def kernel_strategy(family: str) -> str:
    """``"numba"`` when the ``family`` of kernels ("lattice", "models", "mdav", "quality", "k-map", "uniqueness") runs without
    compiling, else ``"numpy"`` (the same results, without seconds of compiling first)."""
    return "numba" if all(_ready(*kernel) for kernel in _kernels(family)) else "numpy"


def compile_kernels() -> None:
    """Compile (or load from numba's cache) every kernel the app runs, on tiny inputs of the same types."""
    import numpy as np
    import pandas as pd

    from microrelease.core import Hierarchy, build_profile, load_dataset
    from microrelease.core.micro.microaggregation import mdav_groups
    from microrelease.core.models.model_profile import build_model_profile
    from microrelease.core.models.sensitive import prepare_models
    from microrelease.core.risk.k_map import code_population, joint_profile
    from microrelease.core.risk.uniqueness import uniqueness_by_node

    table = pd.DataFrame({"zip": ["1", "2", "1", "2"], "secret": ["a", "b", "b", "a"]})
    tiny = load_dataset(table, qi=["zip"], hierarchies={"zip": Hierarchy("zip", (("1", "*"), ("2", "*")))},
                        sensitive=["secret"])
    build_profile(tiny, strategy="numba")
    profile = build_profile(tiny, strategy="numba", quality=True)
    for quality in (False, True):
        build_model_profile(tiny, *prepare_models(tiny, "secret", {"t_closeness": "0.5"}), strategy="numba",
                            quality=quality)
    mdav_groups(np.arange(8.0).reshape(4, 2), 2)
    joint_profile(tiny, code_population(table, tiny), strategy="numba").profile(1, quality=True)
    for fraction in (0.1, 0.5):  # Pitman below Dankar's 10 % cut, Zayatz and SNB above it
        uniqueness_by_node(profile.offsets, profile.sizes, profile.counts, fraction, strategy="numba")


# --- the warm-up child ---------------------------------------------------------------------------
def _lower_priority(pid: int, niceness: int) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, pid, niceness)
    except (OSError, AttributeError):  # not permitted, or not a POSIX system: the normal priority
        pass


def _exit_with(parent: int) -> None:
    """End this process when ``parent`` is gone (a server stopped by a signal does not stop its children)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _warm_in_child(tabs: Sequence[str], send, parent: int, niceness: int) -> None:
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    _lower_priority(0, niceness)
    try:
        compile_kernels()
        from microrelease.app.tabs.tab_registry import TABS

        for tab in TABS:
            if tab.name in tabs and tab.warm is not None:
                tab.warm()
        send.send(export_caches())
    except Exception:
        log.exception("warming up the dashboard failed")
        send.send({})


class WarmUp:
    """Compile the kernels and compute the named tabs' shared figures in one child process, started
    once by :meth:`start`, at the lowest CPU priority (``niceness`` 19: it takes what the server and
    the browser leave). The child is spawned (the server's threads are not forked) and ends when the
    server's process does, however it ends; its figures are handed back whole."""

    def __init__(self, tabs: Sequence[str], niceness: int = 19):
        self.tabs, self.niceness = tuple(tabs), niceness
        self.done = threading.Event()
        self._started = False
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        context = multiprocessing.get_context("spawn")
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_warm_in_child, args=(self.tabs, send, os.getpid(), self.niceness),
                                name="microrelease-warm-up", daemon=True)
        child.start()
        _lower_priority(child.pid, self.niceness)  # at once: the child's own call comes after its imports
        send.close()  # the child holds the sending end: its exit ends recv()
        threading.Thread(target=self._receive, args=(receive, child), name="microrelease-warm-up", daemon=True).start()

    def _receive(self, receive, child) -> None:
        try:
            seed_caches(receive.recv())
        except (EOFError, OSError):  # the child died: the figures are computed here when a tab asks
            log.warning("the warm-up process ended early (exit code %s)", child.exitcode)
        finally:
            receive.close()
            child.join()
            self.done.set()
