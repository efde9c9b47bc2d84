"""The Dask engine: the frequency set and the release computed on a Dask cluster.

Give the address of a running scheduler (``tcp://host:8786``) or a ``dask.distributed.Client``;
with neither, a local cluster is started for the call (useful to try, slower than DuckDB on one
machine). The workers must see the input and output paths (a shared file system). The group-by
uses ``split_out=1``: its result, the frequency set, is small, so no shuffle is needed.
A release is one file (CSV or Parquet) whose rows are in a random order: each row is sent to a
random partition, each partition is shuffled, and the partitions are written one after another
(a release of one partition is only shuffled). Text read from CSV is numpy objects (see _object_strings).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from microrelease.core.engines.engine import (
    COUNT,
    ReleasePlan,
    apply_plan,
    concatenate,
    only_written_categories,
    partial_frequency,
)
from microrelease.core.engines.source import Source
from microrelease.core.exceptions import Cancelled, DataError, EngineError
from microrelease.core.release.cells import formula_cells, shuffled


def _dask():
    try:
        import dask.dataframe as dd  # optional extra: dask
        import distributed  # optional extra: dask
    except ImportError:
        raise EngineError("the dask engine needs 'dask[dataframe,distributed]': "
                          "pip install 'microrelease[dask]'", parameter="engine") from None
    return dd, distributed


def _object_strings(method):
    """``method`` run with text columns as numpy objects: under Dask's default, pyarrow strings, each
    empty copy of a frame's structure (dozens per release) costs per column squared (10,000 columns:
    seconds per copy)."""

    @functools.wraps(method)
    def run(*args, **kwargs):
        import dask  # optional extra: dask

        with dask.config.set({"dataframe.convert-string": False}):
            return method(*args, **kwargs)

    return run


def local_cluster(**options):
    """A ``distributed.LocalCluster`` on ports the OS chooses, without the dashboard.

    ``dashboard_address=None`` alone turns the dashboard off but the scheduler still serves its
    other HTTP routes on port 8787, and fails to start when another cluster holds that port; so
    those routes are sent to a free port on the loopback interface.
    """
    _, distributed = _dask()
    return distributed.LocalCluster(scheduler_port=0, dashboard_address=None,
                                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, **options)


def _close(client, cluster) -> None:
    client.close()
    if cluster is not None:
        cluster.close()


class DaskEngine:
    """``scheduler``: an address or a Client; ``timeout``: seconds to wait for the scheduler;
    ``blocksize``: bytes of CSV per partition; ``partition_rows``: about how many Parquet rows per
    partition (whole row groups).

    Parameters
    ----------
    scheduler : str or distributed.Client, optional
        The scheduler's address or a client (default: a local cluster).
    timeout : float, default 10.0
        Seconds to wait for the scheduler.
    blocksize : str, default "64MB"
        Bytes of CSV per partition.
    partition_rows : int, default 1000000
        About how many rows per partition of an in-memory table.
    """

    name = "dask"

    def __init__(self, *, scheduler=None, timeout: float = 10.0, blocksize: str = "64MB",
                 partition_rows: int = 1_000_000):
        self.scheduler = scheduler
        self.timeout = timeout
        self.blocksize = blocksize
        self.partition_rows = partition_rows
        self._own: tuple[Any, Any] | None = None  # (client, cluster or None) that this engine opened and must close

    @contextmanager
    def _client(self):
        """The given Client, or one connected (or local cluster started) on first use and kept."""
        _, distributed = _dask()
        if isinstance(self.scheduler, distributed.Client):
            yield self.scheduler
            return
        if self._own is None:
            if self.scheduler is None:
                cluster = local_cluster(processes=True)
                self._own = (distributed.Client(cluster, set_as_default=False), cluster)
            else:
                try:
                    client = distributed.Client(str(self.scheduler), timeout=self.timeout, set_as_default=False)
                except (OSError, TimeoutError) as exc:
                    raise EngineError(f"cannot reach the Dask scheduler at {self.scheduler!s} "
                                      f"within {self.timeout:g} s: {exc}", parameter="scheduler") from None
                except ValueError as exc:  # not an address at all
                    raise EngineError(f"the Dask scheduler address {self.scheduler!s} cannot be used: {exc}",
                                      parameter="scheduler") from None
                self._own = (client, None)
            weakref.finalize(self, _close, *self._own)
        yield self._own[0]

    def close(self) -> None:
        """Disconnect (and stop the local cluster, if this engine started one)."""
        if self._own is not None:
            _close(*self._own)
            self._own = None

    def _read(self, source: Source, columns: Sequence[str] | None = None):
        dd, _ = _dask()
        source.columns()  # the reading rule, before Dask's parser (which forgives short rows)
        files = [str(p) for p in source.paths]
        if source.format == "parquet":
            # Dask's default makes one partition per file, however large: one worker would hold
            # a whole 50M-row file. Whole row groups are grouped to about partition_rows rows.
            import pyarrow.parquet as pq  # heavy: pyarrow.parquet, for parquet files only

            meta = pq.ParquetFile(files[0]).metadata
            per_group = max(1, meta.num_rows // max(1, meta.num_row_groups))
            groups = max(1, round(self.partition_rows / per_group))
            return dd.read_parquet(files, columns=list(columns) if columns else None, split_row_groups=groups)
        try:
            return dd.read_csv(files, sep=source.sep, dtype=object, keep_default_na=False, na_filter=False,
                               blocksize=self.blocksize, usecols=list(columns) if columns else None,
                               skip_blank_lines=True)
        except ValueError as error:
            exc: BaseException = error
            # Dask parses the head of the first file here, when the graph is built (outside _wait),
            # and wraps pandas' error twice in messages that hide it: the first cause names the row.
            while exc.__cause__ is not None:
                exc = exc.__cause__
            cause = " ".join(str(exc).split())
            raise DataError(f"{files[0]} is not a well-formed CSV with separator {source.sep!r}: {cause}") from None

    @staticmethod
    def _wait(client, future, progress, should_stop, what: str):
        """Wait for ``future``, polling cancel; errors name the input."""

        if progress is not None:
            progress(0.0)
        # Waiting on a threading event, not future.result(timeout=...): under load, Python 3.11's
        # asyncio.wait_for can let the timeout's cancellation escape distributed's sync(), which then
        # fails with UnboundLocalError instead of a timeout.
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        while not done.wait(0.2):
            if should_stop is not None and should_stop():
                client.cancel(future)
                raise Cancelled("the Dask computation was cancelled")
        try:
            result = future.result()
        except (OSError, ValueError, KeyError) as exc:
            raise DataError(f"Dask failed {what}: {exc}") from None
        if progress is not None:
            progress(1.0)
        return result

    @_object_strings
    def frequency(self, source, qi, *, progress=None, should_stop=None) -> pa.Table:
        if source.frame is not None:
            raise EngineError("the dask engine reads files; use engine='pandas' for a DataFrame", parameter="engine")
        qi = list(qi)
        meta = pd.DataFrame({**{q: pd.Series(dtype=object) for q in qi}, COUNT: pd.Series(dtype="int64")})
        parts = self._read(source, qi).map_partitions(partial_frequency, qi, meta=meta)
        total = parts.groupby(qi, sort=False)[COUNT].sum(split_out=1)
        with self._client() as client:
            (future,) = client.compute([total])
            result = self._wait(client, future, progress, should_stop, f"reading {source.description}")
        return pa.Table.from_pandas(result.rename(COUNT).reset_index(), preserve_index=False)

    @_object_strings
    def release(self, source, plan: ReleasePlan, out: Path, *, progress=None, should_stop=None) -> None:
        frame = self._read(source)
        meta = apply_plan(frame._meta, plan)
        released = frame.map_partitions(apply_plan, plan, meta=meta)
        # A random partition per row, then a random order inside each: a uniformly random order.
        # One partition (a small or a wide table) needs only the second step: its rows go through
        # Dask's shuffle otherwise, which converts them to Arrow and back column by column.
        key = plan.unused_name(RANDOM_KEY)
        if released.npartitions > 1:
            keyed = released.map_partitions(_with_random_key, key, meta=meta.assign(**{key: np.int64(0)}))
            released = keyed.shuffle(key, npartitions=released.npartitions)
        mixed = released.map_partitions(_shuffled_without_key, key, plan.format == "parquet", meta=meta)
        if plan.format == "parquet":
            parts = out.with_name(out.name + ".parts")  # ours, removed below in every case
            # a CSV's text is numpy objects, whose Arrow type Dask cannot infer from its placeholders
            text = {c: str for c in meta.columns if source.format == "csv" and meta[c].dtype == object}
            schema = pa.Schema.from_pandas(meta.astype(text), preserve_index=False).remove_metadata() if text else "infer"
            task = mixed.to_parquet(str(parts), write_index=False, compute=False, schema=schema)
        else:
            parts = None
            task = mixed.to_csv(str(out), single_file=True, index=False, sep=plan.sep, compute=False)
        try:
            with self._client() as client:
                (future,) = client.compute([task])
                self._wait(client, future, progress, should_stop, f"releasing {source.description}")
            if parts is not None:
                concatenate(sorted(parts.glob("*.parquet")), out, "parquet")
        finally:
            if parts is not None and parts.is_dir():
                for p in parts.iterdir():
                    p.unlink()
                parts.rmdir()

    @_object_strings
    def formula_cells(self, source: Source, columns: Sequence[str]) -> dict[str, tuple[int, int]]:
        frame = self._read(source, columns)
        meta = pd.DataFrame({"column": pd.Series(dtype=object), "unescaped": pd.Series(dtype="int64"),
                             "escaped": pd.Series(dtype="int64")})
        counted = frame.map_partitions(_formula_counts, meta=meta).groupby("column").sum()
        with self._client() as client:
            (future,) = client.compute([counted])
            result = self._wait(client, future, None, None, f"reading {source.description}")
        return {str(c): (int(r.unescaped), int(r.escaped)) for c, r in result.iterrows() if r.unescaped or r.escaped}


RANDOM_KEY = "__microrelease_random"


def _with_random_key(part: pd.DataFrame, key: str) -> pd.DataFrame:
    return part.assign(**{key: np.random.default_rng().integers(0, 2**62, len(part))})


def _shuffled_without_key(part: pd.DataFrame, key: str, parquet: bool) -> pd.DataFrame:
    part = shuffled(part.drop(columns=[key]) if key in part.columns else part)
    # each partition is a row group of its own: its dictionaries list its own rows' values only
    return only_written_categories(part) if parquet else part


def _formula_counts(part: pd.DataFrame) -> pd.DataFrame:
    found = formula_cells(part)
    return pd.DataFrame({"column": list(found), "unescaped": [u for u, _ in found.values()],
                         "escaped": [e for _, e in found.values()]}).astype({"unescaped": "int64", "escaped": "int64"})
