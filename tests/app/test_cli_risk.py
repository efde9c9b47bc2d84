"""``microrelease risk``: every figure against a computation written here, record by record with pandas
group-bys (the per-record definitions of El Emam's three attackers and of Benedetti-Franconi's risk),
on the adult sample and on small tables; population files that contain the sample; errors that name
their flag and exit 2."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest

from microrelease.app.cli import build_parser, main
from microrelease.core.data.samples import sample
from microrelease.core.risk import uniqueness

ADULT = sample("adult")
QI = list(ADULT.qi)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv) -> dict:
    code, out, err = run(capsys, "risk", *argv, "--json")
    assert code == 0, err
    assert "NaN" not in out and "Infinity" not in out  # strict JSON (json.loads would accept them)
    return json.loads(out)

def read(path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False, sep=None, engine="python")


# --- the independent computation: one risk per record --------------------------------------------------


def bf_risk(f: float, big_f: float) -> float:
    """Benedetti-Franconi (sdcMicro's "approx"), written from the formulas, one record at a time."""
    p = f / big_f
    if p >= 1:
        return 1 / f
    odds = p / (1 - p)
    if f == 1:
        return odds * math.log(1 / p)
    if f == 2:
        return odds - odds**2 * math.log(1 / p)
    return p / (f - (1 - p))


def expected(data: pd.DataFrame, qi, threshold, *, fraction=None, population: pd.DataFrame | None = None) -> dict:
    """Every figure of the report from per-record class sizes (f in the data, F in the population)."""
    f = data.groupby(qi, sort=False)[qi[0]].transform("size").to_numpy(float)
    classes = data.drop_duplicates(qi)
    if population is not None:
        counts = population.groupby(qi, sort=False).size().rename("F").reset_index()
        big_f = data.merge(counts, on=qi, how="left")["F"].to_numpy(float)
        class_population = classes.merge(counts, on=qi, how="left")["F"].to_numpy(float)
    elif fraction is not None:  # the journalist's population is the data itself; the individual risk's is f / fraction
        big_f, class_population = f, classes.merge(
            data.groupby(qi, sort=False).size().rename("f").reset_index(), on=qi)["f"].to_numpy(float)
    else:
        big_f, class_population = f, classes.merge(
            data.groupby(qi, sort=False).size().rename("f").reset_index(), on=qi)["f"].to_numpy(float)
    prosecutor, journalist = 1 / f, 1 / big_f
    weights = f / fraction if population is None and fraction is not None else big_f
    individual = np.array([bf_risk(a, b) for a, b in zip(f, weights, strict=True)])
    return {
        "rows": len(data), "classes": len(classes),
        "prosecutor": {"highest": prosecutor.max(), "average": prosecutor.mean(),
                       "records_at_risk": (prosecutor > threshold).mean()},
        "journalist": {"highest": journalist.max(),
                       "average": max(len(classes) / class_population.sum(), journalist.mean()),
                       "records_at_risk": (journalist > threshold).mean()},
        "marketer": {"expected_share_reidentified": journalist.mean()},
        "individual": {"mean": individual.mean(), "max": individual.max(), "expected_reidentifications": individual.sum(),
                       "records_above_threshold": int((individual > threshold).sum()),
                       "share_above_threshold": (individual > threshold).mean()},
    }


def assert_figures(result: dict, want: dict) -> None:
    assert (result["rows"], result["classes"]) == (want["rows"], want["classes"])
    for section in ("prosecutor", "journalist", "marketer", "individual"):
        assert result[section] == pytest.approx(want[section], rel=1e-9, abs=1e-12), section


def frequency_of_frequencies(data: pd.DataFrame, qi) -> tuple[np.ndarray, np.ndarray]:
    sizes = data.groupby(qi).size().value_counts().sort_index()
    return sizes.index.to_numpy(np.int64), sizes.to_numpy(np.int64)


def generalized(data: pd.DataFrame, qi, node, folder) -> pd.DataFrame:
    """The data at ``node``, read off the ARX hierarchy files with pandas (column j = level j)."""
    out = data.copy()
    for name, level in zip(qi, node, strict=True):
        h = pd.read_csv(next(folder.glob(f"*_hierarchy_{name}.csv")), sep=";", header=None, dtype=str,
                        keep_default_na=False)
        out[name] = data[name].map(dict(zip(h[0], h[level], strict=True)))
        assert out[name].notna().all()
    return out


# --- the adult sample -------------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [0.2, 0.05, 1.0])
def test_adult_as_it_is_the_sample_is_the_population(capsys, threshold):
    result = run_json(capsys, "--sample", "adult", "--threshold", str(threshold))
    data = read(ADULT.path)
    assert_figures(result, expected(data, QI, threshold))
    # with neither a population nor a fraction, journalist = prosecutor and individual risk is 1 / f
    assert result["journalist"] == result["prosecutor"]
    assert result["individual"]["mean"] == pytest.approx(result["prosecutor"]["average"])
    assert result["population"] == {"source": "the data itself", "rows": len(data), "sampling_fraction": 1.0}
    assert result["population_uniqueness"] is None and result["node"] is None and result["qi"] == QI


@pytest.mark.parametrize(("fraction", "threshold"), [(0.01, 0.2), (0.1, 0.01), (0.5, 0.2), (1.0, 0.2)])
def test_adult_with_a_sampling_fraction(capsys, fraction, threshold):
    result = run_json(capsys, "--sample", "adult", "--sampling-fraction", str(fraction), "--threshold", str(threshold))
    data = read(ADULT.path)
    assert_figures(result, expected(data, QI, threshold, fraction=fraction))
    u = result["population_uniqueness"]
    sizes, counts = frequency_of_frequencies(data, QI)
    assert u["sample_uniques"] == int(counts[sizes == 1].sum())
    assert u["population_size"] == pytest.approx(len(data) / fraction)
    for name in ("pitman", "zayatz", "snb"):
        core = getattr(uniqueness, name)(sizes, counts, fraction)
        assert u["estimators"][name]["uniques"] == (pytest.approx(core.uniques) if core.converged else None)
    # Dankar's rule: Pitman up to a fraction of 0.1 (Zayatz without a Pitman estimate), else the smaller of
    # Zayatz and SNB
    est = {name: e["uniques"] for name, e in u["estimators"].items()}
    if fraction == 1.0:  # the sample is the population: its uniques are the population's
        assert u["dankar"]["uniques"] == u["sample_uniques"]
    elif fraction <= 0.1:
        assert u["dankar"]["model"] == ("pitman" if est["pitman"] is not None else "zayatz")
    else:
        assert u["dankar"]["model"] == ("zayatz" if est["snb"] is None or est["zayatz"] < est["snb"] else "snb")
    if fraction < 1.0:
        assert u["dankar"]["uniques"] == est[u["dankar"]["model"]]
    assert u["true"] is None


def population_of(data: pd.DataFrame, qi, seed: int, *, extra_rows: int) -> pd.DataFrame:
    """A population that contains the data: its rows, rows drawn from it, and rows of new combinations."""
    rng = np.random.default_rng(seed)
    drawn = data.iloc[rng.integers(0, len(data), extra_rows)]
    new = data.iloc[rng.integers(0, len(data), extra_rows // 4)].copy()
    new[qi[-1]] = new[qi[-1]].to_numpy()[rng.permutation(len(new))]  # shuffled: many combinations the data lacks
    return pd.concat([data, drawn, new]).iloc[rng.permutation(len(data) + extra_rows + extra_rows // 4)]


def test_adult_against_a_population_table_that_contains_it(tmp_path, capsys):
    data = read(ADULT.path)
    population = population_of(data, QI, 1, extra_rows=40_000)
    population.to_csv(tmp_path / "population.csv", index=False, sep=";")  # its separator is detected
    result = run_json(capsys, "--sample", "adult", "--population", str(tmp_path / "population.csv"))
    assert_figures(result, expected(data, QI, 0.2, population=population))
    fraction = len(data) / len(population)
    assert result["population"] == {"source": "population table", "file": str(tmp_path / "population.csv"),
                                    "rows": len(population), "sampling_fraction": pytest.approx(fraction)}
    u = result["population_uniqueness"]
    sizes, counts = frequency_of_frequencies(data, QI)
    assert u["dankar"]["uniques"] == pytest.approx(uniqueness.dankar(sizes, counts, fraction).uniques)
    # the truth, counted: population uniques, and the data's classes that are unique in the population
    population_sizes = population.groupby(QI).size()
    in_data = data.groupby(QI).size()
    assert u["true"]["population_uniques"] == int((population_sizes == 1).sum())
    assert u["true"]["share"] == pytest.approx((population_sizes == 1).sum() / len(population))
    assert u["true"]["sample_classes_unique_in_population"] == int((population_sizes[in_data.index] == 1).sum())
    assert u["true"]["sample_classes_unique_in_population"] <= u["sample_uniques"]


def test_a_population_equal_to_the_data_gives_the_sample_figures(tmp_path, capsys):
    (tmp_path / "same.csv").write_bytes(ADULT.path.read_bytes())
    result = run_json(capsys, "--sample", "adult", "--population", str(tmp_path / "same.csv"))
    alone = run_json(capsys, "--sample", "adult")
    for section in ("prosecutor", "journalist", "marketer", "individual"):
        assert result[section] == pytest.approx(alone[section])
    u = result["population_uniqueness"]
    assert u["dankar"]["uniques"] == u["true"]["population_uniques"] == u["sample_uniques"]


def test_adult_generalized_to_a_node(capsys):
    node = [1, 2, 1, 1, 2, 1, 1, 1]
    result = run_json(capsys, "--sample", "adult", "--node", ",".join(map(str, node)), "--sampling-fraction", "0.05")
    data = generalized(read(ADULT.path), QI, node, ADULT.folder)
    assert_figures(result, expected(data, QI, 0.2, fraction=0.05))
    assert result["node"]["vector"] == node and result["node"]["levels"]["sex"] == "*"
    sizes, counts = frequency_of_frequencies(data, QI)
    assert result["population_uniqueness"]["sample_uniques"] == int(counts[sizes == 1].sum())


def test_a_node_generalizes_the_population_too(tmp_path, capsys):
    qi, node = ["sex", "age", "race"], [0, 1, 1]
    data = read(ADULT.path)
    population = population_of(data, qi, 2, extra_rows=10_000)
    population.to_csv(tmp_path / "population.csv", index=False)
    result = run_json(capsys, "--sample", "adult", "--qi", ",".join(qi), "--node", "0,1,1",
                      "--population", str(tmp_path / "population.csv"))
    assert_figures(result, expected(generalized(data, qi, node, ADULT.folder), qi, 0.2,
                                    population=generalized(population, qi, node, ADULT.folder)))


def test_hierarchies_given_by_file_and_the_text_report(tmp_path, capsys):
    files = [f"{a}={next(ADULT.folder.glob(f'*_hierarchy_{a}.csv'))}" for a in ("age", "sex")]
    code, out, err = run(capsys, "risk", str(ADULT.path), "--qi", "age,sex", "--node", "2,0", "--hierarchy", files[0],
                         "--hierarchy", files[1], "--sampling-fraction", "0.1")
    assert code == 0, err
    result = run_json(capsys, str(ADULT.path), "--qi", "age,sex", "--node", "2,0", "--hierarchy", files[0],
                      "--hierarchy", files[1], "--sampling-fraction", "0.1")
    assert_figures(result, expected(generalized(read(ADULT.path), ["age", "sex"], [2, 0], ADULT.folder),
                                    ["age", "sex"], 0.2, fraction=0.1))
    # the text says what the JSON says, in the lines a data steward reads
    p, j, u, i = result["prosecutor"], result["journalist"], result["population_uniqueness"], result["individual"]
    assert f"{result['rows']:,} rows in {result['classes']:,} classes over age, sex (generalized to node [2, 0])" in out
    assert f"  = age: {result['node']['levels']['age']}, sex: as is" in out
    assert f"prosecutor   {p['highest']:>8.4f} {p['average']:>8.4f}" in out
    assert f"journalist   {j['highest']:>8.4f} {j['average']:>8.4f}" in out
    assert f"Dankar's rule chose {u['dankar']['model']}: {u['dankar']['uniques']:,.1f} population uniques" in out
    assert f"expected re-identifications {i['expected_reidentifications']:,.1f}" in out
    assert f"{i['records_above_threshold']:,} records" in out


# --- small tables ------------------------------------------------------------------------------------------


def small_table(seed: int, rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.choice(["x", "y", "z"], rows, p=[0.6, 0.3, 0.1]),
                         "b": rng.integers(0, 4, rows).astype(str), "c": rng.choice(["", "u", "v"], rows)})


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("threshold", [0.1, 0.34, 0.5])
def test_small_tables_with_and_without_a_population(tmp_path, capsys, seed, threshold):
    data = small_table(seed, 30)
    data.to_csv(tmp_path / "d.csv", index=False)
    population = pd.concat([data, small_table(seed + 100, 60)])
    population.to_csv(tmp_path / "p.csv", index=False)
    base = [str(tmp_path / "d.csv"), "--qi", "a,b,c", "--threshold", str(threshold)]
    assert_figures(run_json(capsys, *base), expected(data, ["a", "b", "c"], threshold))
    assert_figures(run_json(capsys, *base, "--sampling-fraction", "0.25"),
                   expected(data, ["a", "b", "c"], threshold, fraction=0.25))
    # the population's rows of combinations the data lacks count in its size, not in any class
    assert_figures(run_json(capsys, *base, "--population", str(tmp_path / "p.csv")),
                   expected(data, ["a", "b", "c"], threshold, population=population))


def test_a_blank_cell_is_a_value_of_its_own(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a,b\nx,\nx,\nx,1\ny,1\n")
    result = run_json(capsys, str(tmp_path / "d.csv"), "--qi", "a,b", "--threshold", "0.5")
    assert result["classes"] == 3  # (x, ""), (x, 1), (y, 1)
    assert result["prosecutor"] == {"highest": 1.0, "average": 0.75, "records_at_risk": 0.5}


def test_every_record_unique_and_one_class(tmp_path, capsys):
    (tmp_path / "u.csv").write_text("a\n1\n2\n3\n4\n")
    u = run_json(capsys, str(tmp_path / "u.csv"), "--qi", "a", "--sampling-fraction", "0.5")
    # every record unique: each model's limit is the whole population (see core.risk.uniqueness)
    assert u["population_uniqueness"]["dankar"]["uniques"] == pytest.approx(8)
    (tmp_path / "one.csv").write_text("a\n1\n1\n1\n")
    one = run_json(capsys, str(tmp_path / "one.csv"), "--qi", "a", "--sampling-fraction", "0.5")
    assert one["prosecutor"]["highest"] == pytest.approx(1 / 3) and one["population_uniqueness"]["dankar"]["uniques"] == 0


def test_a_separator_of_the_data_and_one_qi(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a|b\n1|x\n1|y\n2|y\n")
    result = run_json(capsys, str(tmp_path / "d.csv"), "--sep", "|", "--qi", "a")
    assert result["classes"] == 2 and result["prosecutor"]["highest"] == 1.0 and result["prosecutor"]["average"] == 2 / 3


def test_the_json_is_strict_even_without_an_estimate(capsys, monkeypatch):
    from microrelease.app.cli import risk_command as risk

    failed = uniqueness.UniquenessEstimate("snb", float("nan"), float("nan"), False, 10.0, 1)
    monkeypatch.setattr(risk.uniqueness, "snb", lambda *args: failed)
    code, out, _ = run(capsys, "risk", "--sample", "toy", "--sampling-fraction", "0.5", "--json")
    assert code == 0 and "NaN" not in out
    assert json.loads(out)["population_uniqueness"]["estimators"]["snb"] == {
        "model": "snb", "uniques": None, "share": None, "converged": False}
    code, out, _ = run(capsys, "risk", "--sample", "toy", "--sampling-fraction", "0.5")
    assert "snb      no estimate" in out


# --- errors name their flag, exit 2, print nothing on stdout ----------------------------------------------


def error(capsys, *argv) -> str:
    code, out, err = run(capsys, "risk", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    return err


def test_both_a_population_and_a_sampling_fraction_are_refused(tmp_path, capsys):
    err = error(capsys, "--sample", "toy", "--population", str(ADULT.path), "--sampling-fraction", "0.1")
    assert err == "microrelease: error: give either --population FILE or --sampling-fraction F, not both\n"


@pytest.mark.parametrize("value", ["0", "-0.1", "1.5", "nan"])
def test_a_sampling_fraction_outside_0_1_is_refused(capsys, value):
    err = error(capsys, "--sample", "toy", "--sampling-fraction", value)
    assert err.startswith(f"microrelease: error: --sampling-fraction: must be in (0, 1] (the share of the population "
                          f"the data holds). Got {float(value)!r} instead.")


@pytest.mark.parametrize("value", ["0", "2"])
def test_a_threshold_outside_0_1_is_refused(capsys, value):
    assert error(capsys, "--sample", "toy", "--threshold", value).startswith("microrelease: error: --threshold: must be in")


def test_a_sampling_fraction_that_is_no_number_is_refused_by_argparse(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["risk", "--sample", "toy", "--sampling-fraction", "ten"])
    assert exc.value.code == 2 and "argument --sampling-fraction: invalid float value: 'ten'" in capsys.readouterr().err


def test_a_sample_class_absent_from_the_population_names_the_flag(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a,b\n1,x\n2,y\n")
    (tmp_path / "p.csv").write_text("a,b\n1,x\n1,x\n2,z\n")
    err = error(capsys, str(tmp_path / "d.csv"), "--qi", "a,b", "--population", str(tmp_path / "p.csv"))
    assert err.startswith("microrelease: error: --population: Sample class(es) ('2', 'y') absent from the population")


def test_a_population_with_fewer_rows_of_a_class_than_the_data_names_the_flag(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a\n1\n1\n1\n2\n")
    (tmp_path / "p.csv").write_text("a\n1\n2\n2\n")
    err = error(capsys, str(tmp_path / "d.csv"), "--qi", "a", "--population", str(tmp_path / "p.csv"))
    assert err == (f"microrelease: error: --population: the population {tmp_path / 'p.csv'} has 1 row(s) of the class "
                   "('1',), which has 3 in the data: a population contains the sample (1 such class(es))\n")


def test_a_qi_not_in_the_data_names_the_qi_flag(capsys):
    err = error(capsys, "--sample", "adult", "--qi", "sex,salary,age")
    assert err.startswith(f"microrelease: error: --qi: QI column(s) ['salary'] not in the data {ADULT.path}")


def test_a_qi_not_in_the_population_names_the_population_flag(tmp_path, capsys):
    (tmp_path / "p.csv").write_text("sex,age\nMale,39\n")
    err = error(capsys, "--sample", "adult", "--qi", "sex,race", "--population", str(tmp_path / "p.csv"))
    assert err.startswith(f"microrelease: error: --population: QI column(s) ['race'] not in the population "
                          f"{tmp_path / 'p.csv'}")


def test_a_missing_population_file_names_the_flag(tmp_path, capsys):
    err = error(capsys, "--sample", "toy", "--population", str(tmp_path / "nope.csv"))
    assert err == f"microrelease: error: --population: data file not found: {tmp_path / 'nope.csv'}\n"


def test_a_population_value_missing_from_a_hierarchy_names_the_flag(tmp_path, capsys):
    pd.concat([read(ADULT.path)[["sex", "age"]], pd.DataFrame({"sex": ["Alien"], "age": ["39"]})]).to_csv(
        tmp_path / "p.csv", index=False)
    err = error(capsys, "--sample", "adult", "--qi", "sex,age", "--node", "1,1", "--population", str(tmp_path / "p.csv"))
    assert err.startswith("microrelease: error: --population: hierarchy of 'sex': 1 data value(s) missing from the "
                          "hierarchy: 'Alien' (1 rows)")


@pytest.mark.parametrize(("node", "message"), [
    ("1,2", "--node: node [1, 2] has 2 levels but there are 3 QIs ['age', 'gender', 'zipcode']"),
    ("0,9,0", "--node: node [0, 9, 0]: level 9 of 'gender' is outside 0..1"),
    ("1,x,0", "--node: expects levels like 0,4,1; got '1,x,0'"),
])
def test_a_bad_node_names_the_node_flag(capsys, node, message):
    assert error(capsys, "--sample", "toy", "--node", node).startswith(f"microrelease: error: {message}")


def test_hierarchies_without_a_node_are_refused_not_ignored(tmp_path, capsys):
    err = error(capsys, "--sample", "toy", "--hierarchy-dir", str(tmp_path))
    assert err == "microrelease: error: --hierarchy / --hierarchy-dir apply with --node only (the table as it is " \
                  "needs no hierarchy)\n"


def test_a_node_without_hierarchies_names_the_hierarchy_flag(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a\n1\n")
    err = error(capsys, str(tmp_path / "d.csv"), "--qi", "a", "--node", "1")
    assert err.startswith("microrelease: error: --hierarchy: no hierarchy for QI 'a'")


def test_a_data_file_without_rows_and_a_qi_given_twice(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a,b\n")
    assert "d.csv has a header but no rows" in error(capsys, str(tmp_path / "d.csv"), "--qi", "a")
    (tmp_path / "e.csv").write_text("a,b\n1,2\n")
    assert "column 'a' is given twice" in error(capsys, str(tmp_path / "e.csv"), "--qi", "a,b,a")


# --- the contract every command keeps (tests/app/test_cli.py) -------------------------------------------------


def test_risk_reads_its_arguments_once_into_a_frozen_request():
    args = build_parser().parse_args(["risk", "--sample", "toy", "--sampling-fraction", "0.1", "--node", "1,0,1"])
    before = dict(vars(args))
    request = args.module.Request.from_args(args)
    assert vars(args) == before
    assert type(request).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.threshold = 0.5
    assert request.node == (1, 0, 1) and request.sampling_fraction == 0.1 and request.table.qi == sample("toy").qi


def test_the_command_is_listed():
    from microrelease.app.cli import __doc__ as doc
    from microrelease.app.cli.run import COMMANDS

    assert "risk" in [c.NAME for c in COMMANDS] and "``risk``" in doc
