"""The figures docs/how-to/risk-and-k-map.md's k-map section states on adult-sample (k-minimal counts and heights),
checked (they were the README's)."""

from __future__ import annotations

import pytest

from microrelease.core import build_profile, load_sample, query, read_table
from microrelease.core.data.samples import sample
from microrelease.core.risk.k_map import code_population, joint_profile


@pytest.fixture(scope="module")
def profiles():
    data = load_sample("adult-sample")
    population = code_population(read_table(sample("adult-sample").population_path, sep=None), data)
    return data, joint_profile(data, population, strategy="numpy").profile(5), build_profile(data, strategy="numpy")


def lowest(answer) -> tuple[int, int]:
    """(number of k-minimal nodes, the lowest one's height)."""
    nodes = answer.k_minimal_nodes()
    return len(nodes), min(n.height for n in nodes)


def test_readme_k_map_figures(profiles):
    data, k_map, plain = profiles
    one_percent = data.n_rows // 100
    assert data.n_rows == 3016 and len(data.quasi_identifiers) == 8 and plain.lattice.size == 6480
    assert lowest(query(k_map, 1, 0)) == (33, 12)  # 5-map with k = 1, MaxSup 0
    assert lowest(query(plain, 5, 0)) == (7, 13)  # 5-anonymity on the same sample
    assert lowest(query(k_map, 1, one_percent))[1] == 9 and len(query(k_map, 1, one_percent).k_minimal_nodes()) == 295
    assert lowest(query(plain, 5, one_percent))[1] == 12


def test_the_docs_state_those_figures():
    from docs_text import page, section

    said = " ".join(section(page("how-to/risk-and-k-map.md"), "## k-map against a population table").split())
    assert ("On `adult-sample` (3,016 rows, 8 QIs, 6,480 nodes; `python benchmarks/lattice.py --only k-map`" in said)
    assert ("5-map with k = 1 has 33 k-minimal nodes, the lowest at height 12, where 5-anonymity on the same sample "
            "needs height 13 (7 k-minimal nodes) at MaxSup 0; at MaxSup 1 % 5-map reaches height 9 (295 k-minimal "
            "nodes) against 12.") in said
