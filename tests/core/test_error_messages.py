"""Bad input found by the API is named in one line: the file, line, column, value or hierarchy at fault."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microrelease.core import (
    Criteria,
    DataError,
    Hierarchy,
    HierarchyError,
    InvalidParameterError,
    OutputOptions,
    Schema,
    build_profile,
    load_dataset,
    read_arx,
    write_release,
)
from microrelease.core.data.reading import file_checksum
from microrelease.core.dp.microdata import parse_bounds, validate_bounds
from microrelease.core.engines import Source
from microrelease.core.engines.summary import summarize
from microrelease.core.exceptions import EngineError, OutputError
from microrelease.core.micro.microaggregation import microaggregate

A = Hierarchy("a", (("1", "*"), ("2", "*")))


@pytest.mark.parametrize(("text", "message"), [
    ("a,b\n1,x\n2,y\n" + "1" * 3_000_000 + ",z\n", r"bad\.csv: line 4 is longer than the CSV reader's limit of \d+ bytes"),
    ("a,b\n1,x\n2,y\n1,x,extra\n", r"bad\.csv: line 4 has 3 field\(s\) where the header has 2"),
    ("a,b\n1,x\n   \n2,y\n", r"bad\.csv: line 3 is blank but for spaces"),
    ('a,b\n1,x\n2,"y\n', r"bad\.csv: line 3 has a quoted value that is never closed"),
], ids=["long-line", "ragged", "blank-with-spaces", "open-quote"])
def test_duckdb_names_the_line_and_cause_of_a_bad_csv(tmp_path, text, message):
    (tmp_path / "bad.csv").write_text(text)
    with pytest.raises(DataError, match=message):
        summarize(tmp_path / "bad.csv", qi=["a"], hierarchies={"a": A}, engine="duckdb")


def test_microaggregation_refuses_infinite_values_naming_column_and_rows():
    table = pd.DataFrame({"x": ["1", "2", "3", "4"], "y": ["5", "inf", "-inf", "8"]})
    with pytest.raises(DataError, match=r"QI 'y' has 2 row\(s\) with an infinite value, e\.g\. 'inf'"):
        microaggregate(table, qi=["x", "y"], k=2)


def test_a_hierarchy_field_over_the_csv_limit_names_file_and_line(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("x;*\ny;*\n" + "z" * 200_000 + ";*\n")
    with pytest.raises(DataError, match=r"hierarchy file .*h\.csv of 'b': line 3 cannot be read as CSV"):
        read_arx(path, "b")


def test_file_checksum_names_a_missing_or_unreadable_file(tmp_path):
    with pytest.raises(DataError, match=r"data file not found: .*nope\.csv"):
        file_checksum(tmp_path / "nope.csv")
    with pytest.raises(DataError, match=f"cannot read {tmp_path}"):
        file_checksum(tmp_path)  # a folder


@pytest.mark.parametrize("rows", [
    (("30", "31", "*"), ("31", "30", "*")),  # a cycle: 30 would be released as '31'
    (("a", "x", "y", "*"), ("b", "y", "x", "*")),  # the same one level higher
    (("30", "31", "*"), ("31", "32", "*"), ("32", "32", "*")),  # 31 released as '32', which is also 32
])
def test_a_label_reused_for_another_value_is_refused(rows):
    with pytest.raises(HierarchyError, match=r"must generalize to itself at level \d.* -> "):
        Hierarchy("age", rows)


def test_a_label_may_recur_for_the_same_value():
    h = Hierarchy("sex", (("M", "M", "*"), ("F", "*", "*")))  # padding repeats a value; '*' recurs
    assert h.generalize(["M", "F"], 1) == ["M", "*"]


def test_engines_agree_on_a_float_qi_read_from_parquet(tmp_path, dask_client):
    from microrelease.core.engines import DaskEngine

    path = tmp_path / "t.parquet"
    pd.DataFrame({"age": [39.0, 40.5, np.nan] * 4, "sex": ["M", "F"] * 6}).to_parquet(path)
    age = Hierarchy("age", (("39", "3*", "*"), ("40.5", "4*", "*")))
    results = {}
    for name, engine in [("duckdb", "duckdb"), ("pandas", "pandas"), ("dask", DaskEngine(scheduler=dask_client))]:
        summary = summarize(path, qi=["age"], hierarchies={"age": age}, engine=engine)
        out = tmp_path / f"{name}.csv"
        write_release(summary, (0,), out, criteria=Criteria.of(4))
        released = pd.read_csv(out, dtype=str, keep_default_na=False)
        results[name] = (summary.frequency.codes.tolist(), summary.frequency.counts.tolist(),
                         summary.missing_counts, sorted(zip(released["age"], released["sex"], strict=True)))
    assert results["pandas"] == results["duckdb"] == results["dask"]
    assert sorted(set(results["duckdb"][3])) == [("", "F"), ("", "M"), ("39", "F"), ("39", "M"),
                                                 ("40.5", "F"), ("40.5", "M")]


# --- errors name the API parameter at fault, never a command-line flag ------------------------------

CORE = Path(__file__).resolve().parents[2] / "core"
FLAG = re.compile(r"--[a-z]")


def code_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal of ``source`` but its docstrings: messages are often
    assembled before the ``raise``, so every string counts."""
    tree = ast.parse(source)
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, documented) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(c.lineno, c.value) for c in ast.walk(tree)
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and id(c) not in docstrings]


def test_the_scan_sees_flags_in_f_strings_but_not_in_docstrings():  # else the scan below proves nothing
    source = ('def f(x):\n    """Like --qi."""\n    why = "use --k"\n'
              '    raise ValueError(f"give {x} with --hierarchy", why)\n')
    assert [text for _, text in code_strings(source) if FLAG.search(text)] == ["use --k", " with --hierarchy"]


def test_no_string_in_core_names_a_flag():
    offenders = [f"{path.relative_to(CORE.parent)}:{line}: {text!r}" for path in sorted(CORE.rglob("*.py"))
                 for line, text in code_strings(path.read_text()) if FLAG.search(text)]
    assert not offenders, "core errors name parameters (parameter=...), the CLI maps them to flags:\n" + \
        "\n".join(offenders)


def assert_names(exc_info, parameter: str, text: str) -> None:
    exc = exc_info.value
    assert exc.parameter == parameter and text in str(exc) and not FLAG.search(str(exc)), (exc.parameter, str(exc))


def test_a_missing_hierarchy_names_hierarchies(tmp_path):
    with pytest.raises(DataError) as caught:
        load_dataset(pd.DataFrame({"a": ["1"], "age": ["3"]}), qi=["a", "age"], hierarchies={"a": A},
                     hierarchy_dir=tmp_path)
    assert_names(caught, "hierarchies", f"no hierarchy for QI 'age' in 'hierarchies' or in the folder {tmp_path}")


def test_no_quasi_identifier_names_quasi_identifiers():
    with pytest.raises(DataError) as caught:
        Schema(quasi_identifiers=())
    assert_names(caught, "quasi_identifiers", "at least one quasi-identifier is needed")


def test_bad_or_missing_bounds_name_bounds():
    with pytest.raises(InvalidParameterError) as caught:
        parse_bounds("a=0:1,b=x")
    assert_names(caught, "bounds", "each item of 'bounds' must be NAME=LO:HI; got 'b=x'")
    with pytest.raises(InvalidParameterError) as caught:
        validate_bounds(["a", "b"], {"a": (0, 1)})
    assert_names(caught, "bounds", "no declared bounds for ['b']")


def test_bounds_given_twice_or_too_wide_name_bounds():
    with pytest.raises(InvalidParameterError) as caught:
        parse_bounds("a=0:1,b=0:2,a=0:3")
    assert_names(caught, "bounds", "the bounds of 'a' are given twice (0:1 and 0:3); bound each column once")
    with pytest.raises(InvalidParameterError) as caught:
        validate_bounds(["a"], {"a": (-1e308, 1e308)})  # finite ends, an infinite sensitivity
    assert_names(caught, "bounds", "the range of a=-1e+308:1e+308 is too wide: HI - LO overflows a float")


def test_a_hierarchy_folder_that_is_not_one_names_hierarchy_dir(tmp_path):
    df = pd.DataFrame({"a": ["1", "2"]})
    (tmp_path / "f.csv").write_text("x")
    for folder, problem in ((tmp_path / "f.csv", "is not a folder"), (tmp_path / "no", "does not exist")):
        with pytest.raises(DataError) as caught:
            load_dataset(df, qi=["a"], hierarchy_dir=folder)
        assert_names(caught, "hierarchy_dir", f"the hierarchy folder {folder} {problem}")


def test_a_column_in_two_roles_names_the_parameter_of_its_second():
    with pytest.raises(DataError) as caught:
        Schema(quasi_identifiers=("a",), identifiers=("b",), sensitive=("b",))
    assert_names(caught, "sensitive", "column 'b' is given twice (as identifier and as sensitive)")


def test_ir_swap_without_confidential_attributes_names_confidential():
    with pytest.raises(DataError) as caught:
        microaggregate(pd.DataFrame({"x": ["1", "2", "3", "4"]}), qi=["x"], k=2, method="ir-swap")
    assert_names(caught, "confidential", "ir-swap permutes confidential attributes")


def test_a_previous_release_is_replaced_only_with_force(tmp_path):
    ds = load_dataset(pd.DataFrame({"a": ["1", "2"] * 2}), qi=["a"], hierarchies={"a": A})
    write_release(ds, (1,), tmp_path / "out.csv", criteria=Criteria.of(2))
    with pytest.raises(OutputError) as caught:
        write_release(ds, (1,), tmp_path / "out.csv", criteria=Criteria.of(2))
    assert_names(caught, "force", "holds a previous release")
    write_release(ds, (1,), tmp_path / "out.csv", criteria=Criteria.of(2), output=OutputOptions(force=True))


def test_a_spill_folder_that_cannot_be_made_names_spill_dir(tmp_path):
    (tmp_path / "d.csv").write_text("a\n1\n2\n")
    with pytest.raises(EngineError) as caught:
        summarize(tmp_path / "d.csv", qi=["a"], hierarchies={"a": A}, engine="duckdb",
                  engine_options={"spill_dir": tmp_path / "absent"})
    assert_names(caught, "spill_dir", f"cannot make a spill folder in {tmp_path / 'absent'}")


def test_a_scheduler_that_is_no_address_names_scheduler(tmp_path):
    pytest.importorskip("distributed")
    (tmp_path / "d.csv").write_text("a\n1\n2\n")
    with pytest.raises(EngineError) as caught:
        summarize(tmp_path / "d.csv", qi=["a"], hierarchies={"a": A}, engine="dask",
                  engine_options={"scheduler": "no-port-here"})
    assert_names(caught, "scheduler", "the Dask scheduler address no-port-here cannot be used")


def test_bad_engine_settings_name_their_parameter(tmp_path):
    from microrelease.core.engines import DuckDBEngine, make_engine

    with pytest.raises(InvalidParameterError) as caught:
        DuckDBEngine(memory_limit="lots")
    assert_names(caught, "memory_limit", "The 'memory_limit' parameter must be like '64MB' or '4GB'. Got 'lots'")
    with pytest.raises(InvalidParameterError) as caught:  # 0 meant every core, without a word
        DuckDBEngine(threads=0)
    assert_names(caught, "threads", "The 'threads' parameter must be at least 1. Got 0")
    with pytest.raises(InvalidParameterError) as caught:
        make_engine("spark")
    assert_names(caught, "engine", "The 'engine' parameter must be one of ['dask', 'duckdb', 'pandas']")
    with pytest.raises(EngineError) as caught:
        DuckDBEngine().frequency(Source.of(pd.DataFrame({"a": ["1"]})), ["a"])
    assert_names(caught, "engine", "the duckdb engine reads files; use engine='pandas' for a DataFrame")


def test_bad_weights_and_policies_name_their_parameter():
    from microrelease.core import query

    answer = query(build_profile(load_dataset(pd.DataFrame({"a": ["1", "2"] * 2}), qi=["a"], hierarchies={"a": A})),
                   1, 0)
    with pytest.raises(InvalidParameterError) as caught:
        answer.preferred("weighted", {"age": 2})
    assert_names(caught, "weights", "weight given for 'age', which is not a QI ['a']")
    with pytest.raises(InvalidParameterError) as caught:
        answer.preferred("weighted", {"a": float("nan")})
    assert_names(caught, "weights", "the weight of 'a' must be a finite number >= 0, got nan")
    with pytest.raises(InvalidParameterError) as caught:
        answer.preferred("best")
    assert_names(caught, "policy", "The 'policy' parameter must be one of")


@pytest.mark.parametrize(("build", "parameter"), [
    (lambda: build_profile(load_dataset(pd.DataFrame({"a": ["1", "2"]}), qi=["a"], hierarchies={"a": A}),
                           strategy="fast"), "strategy"),
    (lambda: microaggregate(pd.DataFrame({"x": [1.0, 2.0]}), qi=["x"], k=1, method="mdav"), "method"),
    (lambda: microaggregate(pd.DataFrame({"x": [1.0, 2.0]}), qi=["x"], k=1, strategy="fast"), "strategy"),
])
def test_a_choice_outside_its_list_names_its_parameter(build, parameter):
    with pytest.raises(InvalidParameterError) as caught:
        build()
    assert_names(caught, parameter, f"The '{parameter}' parameter must be")
