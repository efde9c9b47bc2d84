"""Level names: builders name their levels, files are named by example, vectors read as named levels."""

from __future__ import annotations

import io

import pytest
from hypothesis import given

from microrelease.core import Hierarchy, HierarchyError, dates, intervals, masking, read_arx, taxonomy
from microrelease.core.data.samples import load_sample, sample
from microrelease.core.lattice.hierarchies import describe_levels, describe_vector, describe_vectors

from strategies import hierarchy_rows


def arx(name: str, attribute: str) -> Hierarchy:
    return read_arx(sample(name).folder / f"{name}_hierarchy_{attribute}.csv", attribute)


def test_intervals_name_their_bands_by_width_without_claiming_units():
    assert intervals("age", [17, 23, 39, 90], [5, 10, 20]).level_names == (
        "as is", "bands of 5", "bands of 10", "bands of 20", "*")
    assert intervals("income", [0.5, 2.25], [0.5, 2.5]).level_names == ("as is", "bands of 0.5", "bands of 2.5", "*")


def test_masking_of_equal_length_codes_reads_as_what_is_kept():
    assert masking("zip", ["94142", "94139"], [1, 2]).level_names == ("as is", "4 digits", "3 digits", "*")
    assert masking("zip", ["94142"], [4, 5]).level_names == ("as is", "1 digit", "all masked", "*")
    assert masking("code", ["A00", "B12"]).level_names == ("as is", "first 2 characters", "first character", "*")


def test_masking_of_codes_of_different_lengths_reads_as_what_is_masked():
    assert masking("code", ["123", "1234"], [1, 2]).level_names == (
        "as is", "last character masked", "last 2 characters masked", "*")


def test_dates_and_taxonomy():
    assert dates("dob", ["2001-03-04"]).level_names == ("as is", "month", "year", "*")
    h = taxonomy("job", {"nurse": "health", "surgeon": "doctor", "doctor": "health", "health": "*", "clerk": "*"})
    # the example skips "nurse", a padded leaf that repeats itself at level 1
    assert h.level_names == ("as is", "level 1 (e.g. doctor)", "level 2 (e.g. health)", "*")


def test_bundled_arx_files_are_named_by_example():
    assert arx("adult", "age").level_names == (
        "as is", "level 1 (e.g. 0-4)", "level 2 (e.g. 0-9)", "level 3 (e.g. 0-19)", "*")
    assert arx("adult", "sex").level_names == ("as is", "*")
    assert arx("adult", "education").level_names[1:3] == ("level 1 (e.g. Undergraduate)",
                                                          "level 2 (e.g. Higher education)")
    # Samarati's tops are single values other than "*": they say so
    assert arx("samarati", "ZIP").level_names == ("as is", "level 1 (e.g. 9413*)", "level 2 (all: 941**)")
    assert arx("samarati", "Race").level_names == ("as is", "level 1 (all: person)")


def test_a_long_example_is_cut():
    h = read_arx(io.StringIO("a;" + "x" * 40 + ";*\n"), "q")
    assert h.level_names[1] == "level 1 (e.g. " + "x" * 23 + "…)"


def test_explicit_names_are_kept_and_survive_the_missing_value_rule():
    h = Hierarchy("sex", (("M", "*"), ("F", "*")), ("sex", "anyone"))
    assert h.level_names == ("sex", "anyone")
    assert h.with_missing().level_names == ("sex", "anyone")
    with pytest.raises(HierarchyError, match="'sex'.*1 level names given for 2 levels"):
        Hierarchy("sex", (("M", "*"),), ("sex",))


@given(hierarchy_rows("a"))
def test_default_names_start_as_is_end_at_star_and_are_distinct(rows):
    names = Hierarchy("a", tuple(rows)).level_names
    assert len(names) == len(rows[0]) and len(set(names)) == len(names)
    assert names[0] == "as is"
    if len(names) > 1:  # the strategy's top is always "*"
        assert names[-1] == "*"


def test_describe_vector_spells_each_attribute_at_its_level():
    hs = (intervals("age", [17, 90], [10]), masking("zip", ["94142"], [2]), Hierarchy("sex", (("M", "*"), ("F", "*"))))
    assert describe_vector(hs, [1, 1, 1]) == "age: bands of 10, zip: 3 digits, sex: *"
    assert describe_vector(hs, (0, 2, 0)) == "age: as is, zip: *, sex: as is"
    assert describe_levels(hs, [1, 0, 1]) == {"age": "bands of 10", "zip": "as is", "sex": "*"}


def test_describe_vector_refuses_a_vector_that_does_not_fit():
    hs = (Hierarchy("sex", (("M", "*"), ("F", "*"))),)
    with pytest.raises(ValueError, match=r"vector \[1, 0\] has 2 levels for 1 hierarchies"):
        describe_vector(hs, [1, 0])
    with pytest.raises(HierarchyError, match="'sex'.*level 2 outside 0..1"):
        describe_vector(hs, [2])


def test_describe_vectors_spells_each_node_as_describe_vector_does():
    dataset = load_sample("adult")
    grid = dataset.lattice.grid[::97]  # nodes of every height, each QI at each of its levels
    assert {tuple(row) for row in grid[:, :1].tolist()} == {(d,) for d in range(dataset.hierarchies[0].height + 1)}
    assert describe_vectors(dataset.hierarchies, grid) == [describe_vector(dataset.hierarchies, row) for row in grid]
