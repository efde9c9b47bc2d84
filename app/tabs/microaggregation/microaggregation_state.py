"""State of the Microaggregation tab (param only): method, k, the result, the curves and the files.

The curves (information loss and linkage risk of the three methods for k = 2..k_max) depend only on
the data set, so they are computed once per sample and process and shared by sessions. The files
offered are one write of the current result by the core's release path (``microrelease
microaggregate``'s files), re-checked from disk.
"""

from __future__ import annotations

from functools import lru_cache, partial

import pandas as pd
import param

from microrelease.app.caching import computed_once
from microrelease.app.downloads import written_bytes
from microrelease.app.kernel_readiness import kernel_strategy
from microrelease.core.data.samples import MICRODATA_SAMPLES, microdata_sample
from microrelease.core.micro.linkage import record_linkage
from microrelease.core.micro.micro_loss import information_loss
from microrelease.core.micro.micro_release import write_microaggregation
from microrelease.core.micro.microaggregation import METHODS, Microaggregation, microaggregate

CURVE_KS = tuple(range(2, 11))
FILE = "microaggregated.csv"
REPORT = "microaggregated.report.json"
PREVIEW_ROWS = 200
SEED = 2013  # fixed in the app so that a page shows the same release on every redraw; not written out


@lru_cache(maxsize=4)
def sample_table(name: str) -> pd.DataFrame:
    return pd.read_csv(microdata_sample(name).path)


@computed_once(maxsize=128)
def measure(name: str, method: str, k: int) -> tuple[Microaggregation, dict]:
    """One release and its figures; shared read-only by sessions (the curves fill this cache too).
    MDAV runs compiled once its kernel is (numpy's MDAV groups alike, a little slower, on these sizes)."""
    s = microdata_sample(name)
    table = sample_table(name)
    result = microaggregate(table, qi=s.qi, confidential=s.confidential, k=k, method=method,
                            identifiers=s.identifiers, rng=SEED, strategy=kernel_strategy("mdav"))
    loss = information_loss(table, result.released, [*s.qi, *s.confidential])
    risk = record_linkage(table, result.released, s.qi, s.confidential, k=k, sample=2000)
    return result, {"method": method, "k": k, "sse_sst": loss.sse_sst, "linkage": risk.reidentified,
                    "learned": risk.confidential_learned, "bound": 1.0 / k}


@computed_once(maxsize=4)
def curves(name: str) -> pd.DataFrame:
    """SSE/SST %, linkage and learned-value rates of every method for k in CURVE_KS."""
    return pd.DataFrame([measure(name, m, k)[1] for m in METHODS for k in CURVE_KS])


class MicroaggregationState(param.Parameterized):
    sample = param.Selector(default="census", objects=list(MICRODATA_SAMPLES), label="Data set")
    method = param.Selector(default="mdav-id", objects=list(METHODS), label="Method")
    k = param.Integer(default=3, bounds=(2, 50))
    risk = param.Selector(default="linkage", objects=["linkage", "learned"], label="Risk shown",
                          doc="plot records re-identified, or confidential values learned right")
    result = param.Parameter(default=None, doc="the Microaggregation at (sample, method, k)")
    figures = param.Dict(default={}, doc="SSE/SST, linkage and learned rates of the current result")

    def __init__(self, **params):
        super().__init__(**params)
        self._cache: tuple | None = None  # (result, (csv bytes, report bytes)) of the last write
        self._update()

    @param.depends("sample", "method", "k", watch=True)
    def _update(self) -> None:
        self.result, figures = measure(self.sample, self.method, self.k)
        self.figures = dict(figures)  # a copy: the cached dict is shared by sessions

    def curves(self) -> pd.DataFrame:
        return curves(self.sample)

    def description(self) -> str:
        """The data set, in words."""
        return microdata_sample(self.sample).description

    def preview(self) -> pd.DataFrame:
        return self.result.released.head(PREVIEW_ROWS)

    def files(self) -> tuple[bytes, bytes]:
        """(CSV bytes, report JSON bytes) of one write of the current result, re-checked by the core
        (kept until the result changes)."""
        result, s = self.result, microdata_sample(self.sample)
        if self._cache is None or self._cache[0] is not result:
            write = partial(write_microaggregation, result, identifiers=s.identifiers, source=s.file)
            self._cache = (result, written_bytes(write, FILE))
        return self._cache[1]
