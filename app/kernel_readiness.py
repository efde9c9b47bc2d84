"""Whether the numba kernels run without compiling, and compiling them.

The numba kernels are compiled once per machine (numba's on-disk cache); a first-ever run has none.
``kernel_strategy`` says whether a family of kernels can run without compiling; when it cannot, the
app takes the numpy path of the same computation (the kernels' test oracle: identical results),
which is faster than compiling first on the small tables the app runs on. ``compile_kernels`` is what
the warm-up child (``warm_up``) runs first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from microrelease.core import Hierarchy, build_profile, load_dataset
from microrelease.core.micro.microaggregation import mdav_groups
from microrelease.core.models.model_profile import build_model_profile
from microrelease.core.models.sensitive import prepare_models
from microrelease.core.risk.k_map import code_population, joint_profile
from microrelease.core.risk.uniqueness import uniqueness_by_node


def _ready(kernel, signatures: int, ndim: int | None = None) -> bool:
    """Whether numba ``kernel`` runs without compiling: ``signatures`` compiled in this process, or
    found in numba's on-disk cache (fresh for the source); with ``ndim``, one whose second argument
    (the classes' counts) has that many dimensions. Reads numba's cache index (not public API):
    anything unexpected answers False, and the caller takes the numpy path."""
    def fits(found) -> bool:
        found = list(found)
        if ndim is None:
            return len(found) >= signatures
        return any(getattr(sig[1], "ndim", None) == ndim for sig in found)

    if fits(kernel.signatures):
        return True
    try:
        return fits(key[0] for key in kernel._cache._cache_file._load_index())
    except Exception:  # another numba, no cache: compile as before
        return False


def _kernels(family: str) -> list[tuple]:
    """(kernel, signatures[, ndim of the counts]) the ``family`` runs. The profile kernel has two
    signatures: 1-D row counts (k-anonymity) and 2-D columns (everything a class carries beside)."""
    if family in ("lattice", "models", "quality", "k-map"):
        from microrelease.core.lattice.rollup_kernels import (  # numba: compiled on first use
            roll,  # numba: loaded when a family is asked about
        )
        from microrelease.core.lattice.walk_kernel import (  # numba: compiled on first use
            walk_profile,  # numba: loaded when a family is asked about
        )

        if family == "lattice":
            return [(walk_profile, 1, 1), (roll, 1)]
        return [(walk_profile, 1, 2), (roll, 2)]
    if family == "mdav":
        from microrelease.core.micro.mdav_kernels import mdav  # numba: loaded when a family is asked about

        return [(mdav, 1)]
    if family == "uniqueness":
        from microrelease.core.risk.histograms import (  # numba: loaded when a family is asked about
            node_totals,
            snb_classes,
            zayatz_sums,
        )
        from microrelease.core.risk.uniqueness_kernels import (  # numba: loaded when a family is asked about
            pitman_fit,
            snb_solve,
        )

        return [(node_totals, 1), (zayatz_sums, 1), (snb_classes, 1), (snb_solve, 1), (pitman_fit, 1)]
    raise ValueError(f"unknown kernel family {family!r}")


def kernel_strategy(family: str) -> str:
    """``"numba"`` when the ``family`` of kernels ("lattice", "models", "mdav", "quality", "k-map", "uniqueness") runs without
    compiling, else ``"numpy"`` (the same results, without seconds of compiling first)."""
    return "numba" if all(_ready(*kernel) for kernel in _kernels(family)) else "numpy"


def compile_kernels() -> None:
    """Compile (or load from numba's cache) every kernel the app runs, on tiny inputs of the same types."""
    table = pd.DataFrame({"zip": ["1", "2", "1", "2"], "secret": ["a", "b", "b", "a"]})
    tiny = load_dataset(table, qi=["zip"], hierarchies={"zip": Hierarchy("zip", (("1", "*"), ("2", "*")))},
                        sensitive=["secret"])
    build_profile(tiny, strategy="numba")
    profile = build_profile(tiny, strategy="numba", quality=True)
    for quality in (False, True):
        build_model_profile(tiny, *prepare_models(tiny, "secret", {"t_closeness": "0.5"}), strategy="numba",
                            quality=quality)
    mdav_groups(np.arange(8.0).reshape(4, 2), 2)
    joint_profile(tiny, code_population(table, tiny), strategy="numba").profile(1, quality=True)
    for fraction in (0.1, 0.5):  # Pitman below Dankar's 10 % cut, Zayatz and SNB above it
        uniqueness_by_node(profile.offsets, profile.sizes, profile.counts, fraction, strategy="numba")
