"""Property: the dashboard's export and ``microrelease release --node`` write the same release.

Random small tables and hierarchies (tests/strategies.py), random k and MaxSup, optionally distinct
l-diversity or t-closeness (equal distance) on a sensitive column. For a satisfying node, both write
the same multiset of rows and the same report (apart from when it was made and the files' checksums,
which differ with the random row order), and the written file is checked here without the core:
plain dictionaries and pandas groupby, our own EMD.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from brute import level_maps
from strategies import random_cases

pn = pytest.importorskip("panel")

from microrelease.app.cli import main  # noqa: E402
from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.tabs.export.export_state import ExportState  # noqa: E402
from microrelease.core import load_dataset  # noqa: E402
from microrelease.core.exceptions import InvalidParameterError  # noqa: E402

SENSITIVE = "s"
TOLERANCE = 1e-9


@st.composite
def cases(draw):
    case = draw(random_cases())
    values = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=len(case.table), max_size=len(case.table)))
    kind = draw(st.sampled_from([None, "distinct", "distinct", "t-closeness", "t-closeness"]))
    model = None
    if kind == "distinct":
        model = ("distinct", draw(st.integers(1, len(set(values)))))
    elif kind == "t-closeness":
        model = ("t-closeness", draw(st.sampled_from([0.05, 0.2, 1 / 3, 0.5, 1.0])))
    return case, values, model


def write_inputs(folder: Path, case, values) -> tuple[Path, dict[str, Path]]:
    data = folder / "data.csv"
    frame = pd.DataFrame(case.table, columns=case.names)
    frame[SENSITIVE] = values
    frame.to_csv(data, index=False)
    paths = {}
    for name, rows in zip(case.names, case.hierarchy_rows, strict=True):
        paths[name] = folder / f"{name}.csv"
        paths[name].write_text("".join(";".join(r) + "\n" for r in rows), encoding="utf-8")
    return data, paths


def emd_equal(values: list[str], overall: Counter, n: int) -> float:
    here = Counter(values)
    return 0.5 * sum(abs(here[v] / len(values) - overall[v] / n) for v in overall)


def satisfies(model, values: list[str], overall: Counter, n: int) -> bool:
    if model is None:
        return True
    kind, x = model
    return len(set(values)) >= x if kind == "distinct" else emd_equal(values, overall, n) <= x + TOLERANCE


def expected_rows(case, values, node, model) -> list[tuple[str, ...]]:
    """The release by hand: generalize with dictionaries, drop classes smaller than k or failing the model."""
    maps = [level_maps(rows) for rows in case.hierarchy_rows]
    overall, n = Counter(values), len(values)
    classes: dict[tuple, list[str]] = {}
    for row, value in zip(case.table, values, strict=True):
        classes.setdefault(tuple(maps[i][d][row[i]] for i, d in enumerate(node)), []).append(value)
    return sorted((*c, v) for c, vs in classes.items() if len(vs) >= case.k and satisfies(model, vs, overall, n)
                  for v in vs)


def check_file(table: pd.DataFrame, case, values, model, max_sup: int) -> None:
    """k, MaxSup and the model on the written file (pandas groupby, our own formulas)."""
    overall, n = Counter(values), len(values)
    assert n - len(table) <= max_sup
    if len(table) == 0:
        return
    for _, group in table.groupby(case.names, sort=False):
        assert len(group) >= case.k
        assert satisfies(model, list(group[SENSITIVE]), overall, n)


def model_flags(model) -> list[str]:
    if model is None:
        return []
    kind, x = model
    return ["--l-diversity", f"distinct:{x}"] if kind == "distinct" else ["--t-closeness", f"{x!r}:equal"]


def cli(data: Path, hierarchies: dict[str, Path], case, node, model, out: Path) -> int:
    argv = ["release", str(data), "--qi", ",".join(case.names), *[a for q, p in hierarchies.items()
                                                                    for a in ("--hierarchy", f"{q}={p}")],
            "--sensitive", SENSITIVE, "--k", str(case.k), "--max-sup", str(case.max_sup),
            "--node", ",".join(map(str, node)), "--engine", "pandas", *model_flags(model), "-o", str(out), "--quiet"]
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return main(argv)


def comparable(report: dict) -> dict:
    report = json.loads(json.dumps(report))
    del report["created"], report["output"]["files"], report["html_report"]  # the page names the file's checksum
    return report


def read(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)


@settings(max_examples=30, deadline=None)
@given(cases(), st.data())
def test_dashboard_export_and_cli_release_write_the_same_release(example, data):
    case, values, model = example
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path, hierarchies = write_inputs(folder, case, values)
        dataset = load_dataset(path, qi=case.names, hierarchies={q: str(p) for q, p in hierarchies.items()},
                               sensitive=[SENSITIVE])
        e = Explorer(dataset, k=case.k, max_sup=case.max_sup)
        if model is not None:
            kind, x = model
            e.param.update(sensitive_attribute=SENSITIVE, **({"l": x, "l_kind": "distinct"} if kind == "distinct" else
                                                   {"t": x, "ground": "equal"}))
            assert not e.message.startswith("Privacy models not applied"), e.message
        satisfying = [int(i) for i in e.answer.satisfying.nonzero()[0]]
        out = folder / "out" / "release.csv"
        out.parent.mkdir(exist_ok=True)  # the command line writes into a folder that exists
        event(f"model {model[0] if model else None}, {'a satisfying node' if satisfying else 'no satisfying node'}")
        if not satisfying:  # nothing to release: both refuse, nothing is written
            e.selected = e.lattice.size - 1
            assert ExportState(explorer=e).refusal(e.selected)
            with pytest.raises(InvalidParameterError):
                ExportState(explorer=e).files()
            assert cli(path, hierarchies, case, e.lattice.node(e.selected), model, out) == 2
            assert not out.exists()
            return
        e.selected = data.draw(st.sampled_from(satisfying), label="node")
        node = e.lattice.node(e.selected)
        assert ExportState(explorer=e).refusal(e.selected) == ""
        csv, report, _ = ExportState(explorer=e).files()
        assert cli(path, hierarchies, case, node, model, out) == 0
        mine, theirs = read(csv), pd.read_csv(out, dtype=str, keep_default_na=False)
        cli_report = json.loads(out.with_name("release.report.json").read_text())

    assert list(mine.columns) == list(theirs.columns) == [*case.names, SENSITIVE]
    rows = sorted(map(tuple, mine.to_numpy()))
    assert rows == sorted(map(tuple, theirs.to_numpy())) == expected_rows(case, values, node, model)
    assert comparable(json.loads(report)) == comparable(cli_report)
    assert json.loads(report)["counts"]["suppressed_rows"] == e.answer.node(e.selected).suppressed
    check_file(mine, case, values, model, case.max_sup)
