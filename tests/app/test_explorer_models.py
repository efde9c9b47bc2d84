"""The Explorer builds a privacy model's profile with progress, off the page's thread when served."""

from __future__ import annotations

import queue
import threading

import numpy as np
import pytest

pytest.importorskip("panel")

from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.main import sample_with_profile  # noqa: E402
from microrelease.core import query  # noqa: E402
from microrelease.core.models.model_profile import build_model_profile  # noqa: E402
from microrelease.core.models.sensitive import prepare_models  # noqa: E402


class Page:
    """A served page's event loop, as the Explorer sees it: ``hand_back`` queues a function, and
    :meth:`drain` runs what was handed back, on the test's thread (the page's)."""

    def __init__(self) -> None:
        self.queue: queue.Queue = queue.Queue()
        self.threads: set[str] = set()

    def hand_back(self, fn) -> None:
        self.threads.add(threading.current_thread().name)
        self.queue.put(fn)

    def drain(self, explorer: Explorer, timeout: float = 120) -> None:
        """Run handed-back functions until no model profile is being built."""
        while explorer.model_running or not self.queue.empty():
            self.queue.get(timeout=timeout)()


def core_answer(dataset, specs: dict, k: int, max_sup: int):
    return query(build_model_profile(dataset, *prepare_models(dataset, "salary-class", specs)), k, max_sup)


@pytest.fixture
def adult():
    return Explorer(*sample_with_profile("adult"), k=5, max_sup=300)


def test_without_a_page_the_model_profile_is_built_at_once_reporting_progress(adult):
    seen = []
    adult.param.watch(lambda e: seen.append((e.name, e.new)), ["model_progress", "model_running"])
    adult.sensitive_attribute, adult.t = "salary-class", 0.2
    fractions = [v for name, v in seen if name == "model_progress"]
    assert seen[0] == ("model_running", True) and seen[-1] == ("model_running", False)
    assert fractions == sorted(fractions) and len(fractions) > 5 and fractions[-1] == 1.0
    core = core_answer(adult.dataset, {"t_closeness": "0.2:equal"}, 5, 300)
    np.testing.assert_array_equal(adult.answer.satisfying, core.satisfying)
    assert [m.describe() for m in adult.applied_models] == ["0.2-closeness (equal distance)"]


def test_served_the_model_profile_is_built_on_a_worker_and_handed_back(adult):
    page = Page()
    adult.hand_back = page.hand_back
    plain = adult.profile
    adult.sensitive_attribute, adult.t = "salary-class", 0.2
    # back on the page at once: still answering from the plain profile, the bar running
    assert adult.model_running and adult.profile is plain and not adult.applied_models
    adult.k = 10  # the page stays usable meanwhile
    assert adult.profile is plain and adult.answer.k == 10
    progress = []
    adult.param.watch(lambda e: progress.append(e.new), ["model_progress"])
    page.drain(adult)
    assert not adult.model_running and adult.model_progress == 1.0 and len(progress) > 2
    assert page.threads == {"microrelease-models"}  # everything came back from the worker through hand_back
    core = core_answer(adult.dataset, {"t_closeness": "0.2:equal"}, 10, 300)
    np.testing.assert_array_equal(adult.answer.satisfying, core.satisfying)
    np.testing.assert_array_equal(adult.profile.failing_rows, core.profile.failing_rows)


def test_a_newer_question_drops_the_model_profile_being_built(adult):
    page = Page()
    adult.hand_back = page.hand_back
    adult.sensitive_attribute, adult.t = "salary-class", 0.2
    adult.t = 0.3  # before the first build came back
    applied = []
    adult.param.watch(lambda e: applied.append([m.describe() for m in adult.applied_models]), ["profile"])
    page.drain(adult)
    assert applied == [["0.3-closeness (equal distance)"]]  # the 0.2 profile never reached the page
    core = core_answer(adult.dataset, {"t_closeness": "0.3:equal"}, 5, 300)
    np.testing.assert_array_equal(adult.answer.satisfying, core.satisfying)


def test_loading_a_dataset_drops_the_model_profile_being_built(adult):
    page = Page()
    adult.hand_back = page.hand_back
    adult.sensitive_attribute, adult.t = "salary-class", 0.2
    samarati = sample_with_profile("samarati")
    adult.load(*samarati)
    assert not adult.model_running
    for worker in [t for t in threading.enumerate() if t.name == "microrelease-models"]:
        worker.join(timeout=120)  # stopped, or finished with a result for the old dataset
    while not page.queue.empty():
        page.queue.get()()
    assert adult.dataset is samarati[0] and adult.profile is samarati[1] and not adult.applied_models


def test_a_model_that_does_not_fit_is_refused_with_a_message_on_the_page(adult):
    page = Page()
    adult.hand_back = page.hand_back
    adult.sensitive_attribute, adult.l_kind, adult.l = "salary-class", "distinct", 3  # 2 salary classes
    page.drain(adult)
    assert "larger than the 2 distinct values" in adult.message and adult.profile is adult.plain_profile


def test_a_bug_while_building_says_so_on_a_served_page_and_raises_without_one(adult, monkeypatch, caplog):
    from microrelease.app.explorer import models as state  # where the models' profile is built

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(state, "build_model_profile", broken)
    page = Page()
    adult.hand_back = page.hand_back
    adult.sensitive_attribute, adult.t = "salary-class", 0.2
    page.drain(adult)
    assert "internal error (RuntimeError)" in adult.message and adult.profile is adult.plain_profile
    assert "microrelease-models failed" in caplog.text  # the details are in the server log
    adult.hand_back = None
    with pytest.raises(RuntimeError, match="a bug"):
        adult.t = 0.3
    assert not adult.model_running
