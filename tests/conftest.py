import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=150,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def adult():
    from microrelease.core import load_sample

    return load_sample("adult")


@pytest.fixture(scope="session")
def adult_profile(adult):
    from microrelease.core import build_profile

    return build_profile(adult)


@pytest.fixture(scope="session")
def samarati():
    from microrelease.core import load_sample

    return load_sample("samarati")
