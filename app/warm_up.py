"""The warm-up of the served app: ``WarmUp`` compiles the kernels and computes the other tabs'
figures in one child process at the lowest CPU priority, started once the first page is shown; its
figures fill this process's caches. The caller (serve) names the tabs and hands the function that
warms them (the warm-up does not import the tab registry, which builds on it)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence

from microrelease.app.caching import export_caches, seed_caches
from microrelease.app.kernel_readiness import compile_kernels

log = logging.getLogger(__name__)


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


def _warm_in_child(warm: Callable[[Sequence[str]], object], tabs: Sequence[str], send, parent: int,
                   niceness: int) -> None:
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    _lower_priority(0, niceness)
    try:
        compile_kernels()
        warm(tabs)
        send.send(export_caches())
    except Exception:
        log.exception("warming up the dashboard failed")
        send.send({})


class WarmUp:
    """Compile the kernels and compute the named tabs' shared figures (``warm(tabs)``, a module-level
    function the child can import: the tab registry's) in one child process, started
    once by ``start``, at the lowest CPU priority (``niceness`` 19: it takes what the server and
    the browser leave). The child is spawned (the server's threads are not forked) and ends when the
    server's process does, however it ends; its figures are handed back whole."""

    def __init__(self, tabs: Sequence[str], warm: Callable[[Sequence[str]], object], niceness: int = 19):
        self.tabs, self.warm, self.niceness = tuple(tabs), warm, niceness
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
        child = context.Process(target=_warm_in_child, args=(self.warm, self.tabs, send, os.getpid(), self.niceness),
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
