"""Large test tables made by DuckDB from the adult sample (seeded, reproducible content).

Shared by the engine tests and benchmarks/scale.py.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from microrelease.core.data.samples import sample


def _adult(con) -> int:
    s = sample("adult")
    con.execute(f"CREATE OR REPLACE TABLE adult AS SELECT row_number() OVER () - 1 AS __i, * FROM "
                f"read_csv('{s.path}', delim = ';', header = true, all_varchar = true)")
    return con.execute("SELECT count(*) FROM adult").fetchone()[0]


def resample_adult(out: str | Path, n_rows: int, *, seed: int = 20261129, fmt: str = "parquet") -> Path:
    """``n_rows`` rows drawn with replacement from adult (row i takes adult row hash(i, seed) mod N)."""
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    n = _adult(con)
    options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
    con.execute(f"COPY (SELECT a.* EXCLUDE (__i) FROM range({int(n_rows)}) r JOIN adult a "
                f"ON a.__i = hash(r.range + {int(seed)}) % {n}) TO '{out}' ({options})")
    con.close()
    return Path(out)


def replicate_adult(out: str | Path, copies: int, *, padding: int = 0) -> Path:
    """Every adult row ``copies`` times, with a unique ``person_id`` and a ``note`` of ``padding``
    characters (to make the file large), as CSV."""
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    _adult(con)
    con.execute(f"COPY (SELECT r.range * 100000 + a.__i AS person_id, a.* EXCLUDE (__i), "
                f"repeat('x', {int(padding)}) AS note FROM range({int(copies)}) r CROSS JOIN adult a) "
                f"TO '{out}' (FORMAT csv, HEADER true)")
    con.close()
    return Path(out)


def uniform_random(out: str | Path, n_rows: int, hierarchies, *, seed: int = 7) -> Path:
    """``n_rows`` rows whose QI values are drawn uniformly from each hierarchy's ground values
    (about as many distinct combinations as rows: the profile's worst case)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({h.attribute: np.asarray(h.ground, dtype=object)[rng.integers(0, len(h.ground), n_rows)]
                          for h in hierarchies})
    frame.to_parquet(out, index=False)
    return Path(out)
