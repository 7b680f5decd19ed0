"""The fast path's rollout shards as Ray actors on a cluster (``address``, ``--address``).

Ray is the scheduler: the run joins the cluster
(:func:`allfives_train.algorithms.search_distill.ray_label.join`) and
starts one actor (one CPU) per group of shards (:class:`allfives_train.games.shards.ShardGroup`);
every rollout the learner puts its weights in the object store once, each actor plays its
shards and returns their buffers, and the learner joins them as a local worker's. The same
shard gives the same games on any node. Each actor records the id of the node it runs on
(``nodes``). Ray is imported only here, when ``address`` is set (the ``rllib`` extra); each
node needs this package installed, and an ``init_from`` checkpoint at the same path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from allfives_train.algorithms.search_distill.ray_label import import_ray, join
from allfives_train.config import TrainConfig


class _Actor:
    """One worker on the cluster: a :class:`allfives_train.games.shards.ShardGroup` and its node
    id."""

    def __init__(self, cfg: TrainConfig, shards: list[int], n_features: int) -> None:
        from allfives_agents.evaluation.threads import limit_blas_threads
        from allfives_train.games.shards import ShardGroup

        limit_blas_threads(1)
        self.group = ShardGroup(cfg, shards, n_features)

    def node(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def call(self, method: str, *args: Any) -> Any:
        return getattr(self.group, method)(*args)

    def collect(self, n_steps: int, epsilon: float | None) -> dict[int, dict[str, Any]]:
        """The group's rollout, its buffers as numpy arrays (for the object store)."""
        parts = self.group.collect(n_steps, epsilon)
        for part in parts.values():
            part["buf"] = {k: v.cpu().numpy() for k, v in part["buf"].items()}
        return parts


class RayWorkers:
    """The shards as Ray actors on the cluster at ``cfg.address``: ``rollout_workers`` of them
    (null: one per CPU of the cluster), at most one per shard."""

    def __init__(self, cfg: TrainConfig, shards: int, n_features: int) -> None:
        from allfives_train.games.shards import fixed_workers, split

        assert cfg.address is not None
        self.ray = import_ray(cfg.address)
        self.owned = join(self.ray, cfg.address)
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        groups = split(shards, fixed_workers(cfg) or max(1, cpus))
        remote = self.ray.remote(num_cpus=1)(_Actor)
        self.actors = [remote.remote(cfg, group, n_features) for group in groups]
        #: the node id of each actor, in group order
        self.nodes: list[str] = self.ray.get([a.node.remote() for a in self.actors])

    def call(self, method: str, *args: Any) -> list[Any]:
        shared = [self.ray.put(a) if _large(a) else a for a in args]
        return self.ray.get([a.call.remote(method, *shared) for a in self.actors])

    def collect(self, n_steps: int, epsilon: float | None
                ) -> tuple[dict[str, torch.Tensor], dict[int, dict[str, Any]]]:
        """Every actor's rollout: the buffers joined along the env axis in shard order, and
        each shard's other parts."""
        parts: dict[int, dict[str, Any]] = {}
        for part in self.ray.get([a.collect.remote(n_steps, epsilon) for a in self.actors]):
            parts.update(part)
        bufs = [parts[i].pop("buf") for i in range(len(parts))]
        return {k: torch.from_numpy(np.concatenate([b[k] for b in bufs], 1))
                for k in bufs[0]}, parts

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
        if self.owned:
            self.ray.shutdown()


def _large(value: Any) -> bool:
    """Weights (a dict of arrays): put in the object store once for every actor."""
    return isinstance(value, dict)
