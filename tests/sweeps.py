"""Sweeps split between every run and the slow step: the first cases of a parametrized sweep run on
every ``pytest``; the rest are marked ``slow`` (``pytest -m slow``, CI's second required step)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest


def sweep(values: Iterable, every_run: int = 1, names: int = 1) -> list:
    """VALUES as parameters, all but the first EVERY_RUN marked slow. With NAMES > 1 each value is a
    tuple holding one value per parametrized name."""
    def slow(v):
        return pytest.param(*(v if names > 1 else (v,)), marks=pytest.mark.slow)
    return [v if i < every_run else slow(v) for i, v in enumerate(values)]
