import os
import socket

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=150,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The ports that Dask's scheduler and dashboard and Panel's server take when nobody says otherwise.
DEFAULT_PORTS = {8786: "Dask scheduler", 8787: "Dask dashboard", 5006: "Panel server"}


@pytest.fixture(scope="session", autouse=True)
def default_ports_taken():
    """Hold the default ports for the whole run, so that a test (or the code under test) that binds
    one fails here as it would on a machine where another cluster or dashboard runs. A port that is
    already taken by someone else is taken all the same."""
    held = []
    for port in DEFAULT_PORTS:
        s = socket.socket()
        # SO_REUSEPORT lets test runs held side by side share the port, while any other bind
        # fails; every IPv4 interface, so that a bind to 127.0.0.1:port fails too.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            s.bind(("0.0.0.0", port))
            s.listen()
            held.append(s)
        except OSError:
            s.close()
    yield sorted(DEFAULT_PORTS)
    for s in held:
        s.close()


@pytest.fixture(scope="session")
def dask_client():
    """One local Dask cluster (two worker processes) for every Dask test of the run."""
    import distributed

    from microrelease.core.engines.dask_engine import local_cluster

    with local_cluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client


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
