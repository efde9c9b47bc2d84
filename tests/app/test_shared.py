"""What the served app's sessions share: figures computed once, kernels compiled or not, the warm-up child."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from browser_util import until

pytest.importorskip("panel")

from microrelease.app import caching, kernel_readiness  # noqa: E402
from microrelease.app.caching import computed_once  # noqa: E402
from microrelease.app.kernel_readiness import kernel_strategy  # noqa: E402
from microrelease.app.tabs.tab_registry import warm_figures  # noqa: E402
from microrelease.app.warm_up import WarmUp  # noqa: E402


def test_a_figure_being_computed_is_waited_for_not_computed_again():
    calls, release = [], threading.Event()

    @computed_once(maxsize=4)
    def figure(x):
        calls.append(x)
        release.wait(5)
        return [x]

    threads = [threading.Thread(target=figure, args=(1,)) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    release.set()
    for t in threads:
        t.join()
    assert calls == [1] and figure(1) == [1] and calls == [1]


def test_values_exported_by_one_process_seed_another_and_the_oldest_go_first():
    @computed_once(maxsize=2)
    def figure(x):
        raise AssertionError("computed here although seeded")

    figure.seed([((1,), "one"), ((2,), "two")])
    assert figure(1) == "one" and figure(2) == "two"
    figure.seed([((3,), "three"), ((2,), "not kept: 2 was here")])
    assert figure.export() == [((2,), "two"), ((3,), "three")]  # 1, the least recently used, made room
    name = f"{figure.__module__}.{figure.__qualname__}"
    assert caching.export_caches()[name] == figure.export()


def test_kernels_run_compiled_once_compiled_and_on_numpy_while_numbas_cache_is_empty(tmp_path):
    from microrelease.core import build_profile, load_sample

    build_profile(load_sample("samarati"), strategy="numba")  # compiled, or loaded from the cache, here
    assert kernel_strategy("lattice") == "numba"
    # A first-ever run: nothing in an empty cache (the check reads numba's index; nothing compiles)
    families = ("lattice", "models", "mdav", "quality", "k-map", "uniqueness")
    code = f"from microrelease.app.kernel_readiness import kernel_strategy as s; print(*(s(f) for f in {families}))"
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert fresh.stdout.split() == ["numpy"] * len(families)
    kernel_readiness.compile_kernels()  # what the warm-up child runs: afterwards every family is ready
    assert all(kernel_strategy(f) == "numba" for f in families)
    with pytest.raises(ValueError, match="unknown kernel family"):
        kernel_strategy("nope")


def test_a_numba_without_the_cache_index_we_read_means_compiling_as_before():
    class Dispatcher:  # what an unexpected numba might hand over: no cache, nothing compiled
        signatures: list = []

    assert not kernel_readiness._ready(Dispatcher(), 1)


def test_the_warm_up_child_hands_the_tabs_figures_back(monkeypatch):
    from microrelease.app.tabs.microaggregation import microaggregation_state as state

    warm_up = WarmUp(["microaggregation"], warm_figures, niceness=0)
    warm_up.start()
    warm_up.start()  # once only
    assert warm_up.done.wait(300), "the warm-up process did not finish"
    monkeypatch.setattr(state, "microaggregate", lambda *a, **k: pytest.fail("computed here, not handed back"))
    curves = state.curves("census")
    assert len(curves) == 3 * len(state.CURVE_KS)
    assert state.measure("census", "mdav-id", 3)[1]["k"] == 3  # the releases behind the curves came too


def test_the_warm_up_child_ends_with_the_server_process():
    """A server stopped by a signal does not stop its children: the child watches its parent."""
    watcher = ("import sys; from microrelease.app.warm_up import _exit_with; "
               "print('watching', flush=True); _exit_with(int(sys.argv[1]))")
    with subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "{watcher}" $$ & echo $!; read line'],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as parent:
        child = int(parent.stdout.readline())
        assert parent.stdout.readline().strip() == "watching"
        time.sleep(1)
        assert Path(f"/proc/{child}").exists()  # alive while its parent is
        parent.stdin.close()  # the parent ends
        parent.wait(10)
    def ended() -> bool:
        try:  # a zombie has ended; its new parent has yet to reap it
            return Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except FileNotFoundError:
            return True

    until(ended, "the child outlived its parent")
