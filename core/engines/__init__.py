"""Engines for the one pass over the rows: pandas (in memory), DuckDB (files, embedded), Dask (cluster).

Samarati's method needs the rows only to build the frequency set and, at the end, to write the
release; everything in between runs on the frequency set. So the rows can live in a DataFrame,
in files larger than memory, or on a cluster, and the lattice work stays the same.
``ENGINES`` is the registry read by the CLI and the tests.
"""

from __future__ import annotations

from microrelease.core.engines.dask_engine import DaskEngine
from microrelease.core.engines.duckdb_engine import DuckDBEngine
from microrelease.core.engines.engine import COUNT, Engine, ReleasePlan, apply_plan, output_format
from microrelease.core.engines.pandas_engine import PandasEngine
from microrelease.core.engines.source import Source
from microrelease.core.exceptions import InvalidParameterError

ENGINES: dict[str, type] = {"pandas": PandasEngine, "duckdb": DuckDBEngine, "dask": DaskEngine}


def make_engine(engine: str | Engine, **options) -> Engine:
    """An engine object from its name and options (an engine object is returned as is).

    Parameters
    ----------
    engine : str or Engine
        A key of ``ENGINES``, or an engine.
    **options
        The engine's options.

    Returns
    -------
    Engine
        The engine.

    Raises
    ------
    InvalidParameterError
        If the name is unknown.

    Examples
    --------
    >>> type(make_engine("pandas")).__name__
    'PandasEngine'
    """
    if not isinstance(engine, str):
        return engine
    if engine not in ENGINES:
        raise InvalidParameterError(f"The 'engine' parameter must be one of {sorted(ENGINES)}. Got {engine!r} instead.",
                                    parameter="engine")
    return ENGINES[engine](**options)


__all__ = ["COUNT", "ENGINES", "DaskEngine", "DuckDBEngine", "Engine", "PandasEngine", "ReleasePlan", "Source",
           "apply_plan", "make_engine", "output_format"]
