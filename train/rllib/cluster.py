"""A multi-node Ray cluster simulated on one machine (Ray's own ``ray.cluster_utils.Cluster``:
a head and worker nodes, each its own raylet with its own resources), where the trainer's
env runners are placed on the worker nodes by a custom resource; and a measurement of the
tiny config for tests (the measurement of it on a local Ray and on that cluster is the lab's
``python -m experiments.bench.rllib_cluster``).

A real cluster needs no code: ``ray start --head --resources '{"head_node": 1}'`` on one
machine, ``ray start --address=<head>:6379 --resources '{"worker_node": 1}'`` on the others,
then ``allfives train --algo rllib_ppo --address auto --num-env-runners N
--set 'env_runner_resources={worker_node: 0.01}'`` on the head (docs/rllib.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

WORKER_RESOURCE = "worker_node"
TINY = {"algo": "rllib_ppo", "iterations": 1, "num_env_runners": 1, "train_batch_size": 512,
        "minibatch_size": 256, "num_epochs": 1, "net_arch": [32], "rules": {"target": 61},
        "rllib_checkpoint_every": 1000,
        "reward": "shaped", "opponents": [{"agent": "greedy", "weight": 1.0}]}


@contextlib.contextmanager
def simulated_cluster(workers: int = 1, head_cpus: int = 1, worker_cpus: int = 1
                      ) -> Iterator[Any]:
    """A head node (``head_cpus`` CPUs, resource ``head_node``) plus ``workers`` nodes
    (``worker_cpus`` CPUs each, resource ``worker_node: 1``), all on this machine; yields
    the ``Cluster`` (its ``address`` is for ``ray.init`` / ``--address``); shut down after."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": head_cpus, "resources": {"head_node": 1}, "include_dashboard": False})
    try:
        for _ in range(workers):
            cluster.add_node(num_cpus=worker_cpus, resources={WORKER_RESOURCE: 1})
        cluster.wait_for_nodes()
        yield cluster
    finally:
        import ray

        ray.shutdown()
        cluster.shutdown()
