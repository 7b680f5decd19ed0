"""Shared pytest set-up: hypothesis profiles, and a simulated 2-node Ray cluster.

``HYPOTHESIS_PROFILE=dev`` gives more examples; CI (``CI`` set) runs a derandomized profile so a
red build always reproduces.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci", deadline=None, max_examples=60, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else
                                     "default"))


@pytest.fixture
def two_node_cluster() -> Iterator[tuple[str, str]]:
    """A 2-node Ray cluster simulated with ``ray.cluster_utils.Cluster``: (its address, the
    worker node's id). The head offers no CPU, so a task or actor (one CPU each) can only run
    on the worker node. Skipped without Ray."""
    pytest.importorskip("ray")
    import ray
    from ray.cluster_utils import Cluster

    ray.shutdown()  # another test module's local Ray, if any
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        worker = cluster.add_node(num_cpus=2).node_id
        cluster.wait_for_nodes()
        assert worker != cluster.head_node.node_id
        yield cluster.address, worker
    finally:
        ray.shutdown()
        cluster.shutdown()
