"""The one profile kernel: every whole-lattice profile (k-anonymity, quality, privacy models, k-map) runs
through ``walk_profile`` in two compiled signatures, and agrees with its numpy oracle."""

import numpy as np
import pandas as pd

from microrelease.core import Hierarchy, build_profile, load_dataset
from microrelease.core.lattice.walk_kernel import walk_profile
from microrelease.core.models.model_profile import build_model_profile
from microrelease.core.models.sensitive import prepare_models
from microrelease.core.risk.k_map import code_population, joint_profile


def _tiny():
    table = pd.DataFrame({"zip": ["1", "2", "1", "2", "1"], "age": ["a", "b", "b", "a", "a"],
                          "secret": ["x", "y", "y", "x", "y"]})
    hierarchies = {"zip": Hierarchy("zip", (("1", "*"), ("2", "*"))), "age": Hierarchy("age", (("a", "*"), ("b", "*")))}
    return table, load_dataset(table, qi=["zip", "age"], hierarchies=hierarchies, sensitive=["secret"])


def test_every_profile_family_runs_through_the_one_kernel_in_two_signatures():
    table, ds = _tiny()
    plain = build_profile(ds, strategy="numba")
    quality = build_profile(ds, strategy="numba", quality=True)
    prepared = prepare_models(ds, "secret", {"l_diversity": "distinct:2"})
    models = build_model_profile(ds, prepared.sensitive_frequency, prepared.models, strategy="numba", quality=True)
    joint = joint_profile(ds, code_population(table, ds), strategy="numba")
    k_map = joint.profile(1, quality=True)
    dims = {(sig[1].ndim, str(sig[1].dtype)) for sig in walk_profile.signatures}
    assert dims == {(1, "int64"), (2, "float64")}
    # and each agrees with its oracle (the other strategy of the same computation)
    for fast, slow in ((plain, build_profile(ds, strategy="direct")),
                       (quality, build_profile(ds, strategy="direct", quality=True)),
                       (models, build_model_profile(ds, prepared.sensitive_frequency, prepared.models, strategy="numpy",
                                                    quality=True)),
                       (k_map, joint_profile(ds, code_population(table, ds), strategy="numpy").profile(1, quality=True))):
        for k in (1, 2, 3):
            np.testing.assert_array_equal(fast.stats(k).suppressed, slow.stats(k).suppressed)
            np.testing.assert_array_equal(fast.stats(k).distinct, slow.stats(k).distinct)
        if fast.quality is not None:
            np.testing.assert_allclose(fast.quality.pairs, slow.quality.pairs, rtol=1e-12, atol=1e-9)
