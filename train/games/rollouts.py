"""The fast path's rollouts on N workers (``rollout_workers``, ``rollout_shards``).

The learner's ``n_envs`` games are cut into ``rollout_shards`` fixed shards. A shard is a
Gymnasium ``VectorEnv`` of its own (:func:`allfives_train.games.shards.make_vector_env`), seeded by
``(seed, shard)`` alone, with its own ``torch.Generator`` for the learner's sampled or
epsilon-greedy moves. A worker holds some shards and a copy of the learner's network; each
rollout the learner sends the network's weights, every worker plays ``n_steps`` steps of its
shards (:func:`allfives_train.games.shards.collect`) and the learner joins the shards' buffers along
the env axis, then updates as before. Weights after every update: the rollouts stay on-policy.

Since a shard's games and moves depend only on ``(seed, shard)`` and the weights, the same
config gives the same buffers, and so the same training, with any number of workers:

* one worker: the shards in this process, one after the other (no process is started);
* ``rollout_workers`` > 1 (null: one per core, at most one per shard): spawned processes on
  this machine, each holding ``shards[k::workers]`` and writing their rollouts straight into
  the learner's buffers in shared memory;
* with ``address``: Ray actors (one CPU each) on the cluster at that address, returning their
  buffers through Ray's object store (:mod:`allfives_train.games.ray_rollouts`). Ray is the
  scheduler.

The hooks talk to :class:`Rollouts` as to a VectorEnv (``set_self``, ``add_snapshot``,
``close``): it passes each call to every shard.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np
import torch

from allfives_train.config import FAST, TrainConfig
from allfives_train.games.shards import (
    BUFFERS,
    ShardGroup,
    buffer_shapes,
    learner_obs_size,
    resolve_workers,
    shard_sizes,
    split,
)
from allfives_train.games.workers import worker_init


class Rollouts:
    """The learner's side: the shards on their workers, seen as one batch of ``n_envs``
    games (env axis in shard order)."""

    def __init__(self, cfg: TrainConfig, agent: Any, n_features: int,
                 device: torch.device | None = None) -> None:
        self.sizes = shard_sizes(cfg.n_envs, cfg.section(FAST).rollout_shards)
        self.num_envs = cfg.n_envs
        self.local: ShardGroup | None = None
        self.remote: Any = None
        if cfg.address is not None:
            from allfives_train.games.ray_rollouts import RayWorkers

            self.remote = RayWorkers(cfg, len(self.sizes), n_features)
            self.workers = len(self.remote.actors)
            return
        self.workers = resolve_workers(cfg)
        groups = split(len(self.sizes), self.workers)
        if self.workers > 1:
            self.remote = ProcessWorkers(cfg, groups, n_features)
        else:
            self.local = ShardGroup(cfg, groups[0], n_features, agent, device)

    def describe(self) -> dict[str, Any]:
        """The card's record: shards, workers, where they ran (Ray: each actor's node id)."""
        where = ("ray" if self.remote is not None and hasattr(self.remote, "nodes")
                 else "processes" if self.remote is not None else "this process")
        out: dict[str, Any] = {"shards": len(self.sizes), "workers": self.workers,
                               "where": where}
        if where == "ray":
            out["nodes"] = list(self.remote.nodes)
        return out

    def _all(self, method: str, *args: Any) -> list[Any]:
        if self.local is not None:
            return [getattr(self.local, method)(*args)]
        return self.remote.call(method, *args)

    def reset(self, seed: int) -> None:
        self._all("reset", seed)

    def set_self(self, arrays: dict[str, np.ndarray]) -> None:
        self._all("set_self", arrays)

    def add_snapshot(self, arrays: dict[str, np.ndarray], name: str) -> None:
        self._all("add_snapshot", arrays, name)

    def collect(self, agent: Any, n_steps: int, epsilon: float | None,
                device: torch.device) -> tuple[dict[str, Any], np.ndarray]:
        """One rollout of every shard with ``agent``'s current weights: the joined buffers
        (torch, on ``device``; ``pool``: the learner's win rate in the games that ended) and
        the next observations."""
        if self.local is not None:
            parts = self.local.collect(n_steps, epsilon)
            bufs = [parts[i]["buf"] for i in range(len(self.sizes))]
            buf = {k: bufs[0][k] if len(bufs) == 1 else torch.cat([b[k] for b in bufs], 1)
                   for k in BUFFERS}
        else:
            weights = {k: v.detach().cpu().numpy() for k, v in agent.state_dict().items()}
            self.remote.call("load", weights)
            buf, parts = self.remote.collect(n_steps, epsilon)
            # a copy: the shared blocks are written again next rollout, and freed at close
            buf = {k: v.to(device, copy=True) for k, v in buf.items()}
        order = [parts[i] for i in range(len(self.sizes))]
        games = sum(p["games"] for p in order)
        wins = sum(p["wins"] for p in order)
        buf["pool"] = {"pool_win_rate": wins / games} if games else {}
        return buf, np.concatenate([p["next_obs"] for p in order])

    def close(self) -> None:
        if self.local is not None:
            self.local.close()
        elif self.remote is not None:
            self.remote.close()
            self.remote = None


GONE = ("a rollout worker ended unexpectedly (out of memory, or killed); --resume "
        "continues from the last checkpoint")


class ProcessWorkers:
    """Spawned processes on this machine, one per group of shards, driven through pipes;
    each writes its shards' rollout straight into the learner's buffers in shared memory (one
    block per buffer; a shard's columns are its games); only small parts go through the
    pipes, and the learner copies the buffers once."""

    def __init__(self, cfg: TrainConfig, groups: list[list[int]], n_features: int) -> None:
        sizes = shard_sizes(cfg.n_envs, cfg.section(FAST).rollout_shards)
        starts = np.cumsum([0, *sizes])
        self.ranges = {i: (int(starts[i]), int(starts[i + 1])) for i in range(len(sizes))}
        self.n_envs, self.obs_size = cfg.n_envs, learner_obs_size(cfg, n_features)
        self.blocks: dict[str, SharedMemory] = {}
        self.arrays: dict[str, np.ndarray] = {}
        self.n_steps = 0
        ctx = multiprocessing.get_context("spawn")
        self.conns, self.procs = [], []
        for group in groups:
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(theirs, cfg, group, n_features),
                               daemon=True)
            proc.start()
            theirs.close()
            self.conns.append(mine)
            self.procs.append(proc)
        try:
            for conn in self.conns:  # every worker built its shards (or says why not)
                self._reply(conn)
        except ChildProcessError:
            self.close()
            raise

    def call(self, method: str, *args: Any) -> list[Any]:
        try:
            for conn in self.conns:
                conn.send((method, args))
        except (BrokenPipeError, ConnectionResetError):
            raise ChildProcessError(GONE) from None
        return [self._reply(conn) for conn in self.conns]

    def collect(self, n_steps: int, epsilon: float | None
                ) -> tuple[dict[str, torch.Tensor], dict[int, dict[str, Any]]]:
        """Every worker writes its shards' rollout into the shared buffers (the env axis in
        shard order): the buffers as torch tensors (no copy) and each shard's other parts."""
        if self.n_steps != n_steps:
            self._allocate(n_steps)
        spec = {k: (b.name, self.arrays[k].shape, self.arrays[k].dtype.str)
                for k, b in self.blocks.items()}
        parts: dict[int, dict[str, Any]] = {}
        for part in self.call("collect_into", n_steps, epsilon, spec, self.ranges):
            parts.update(part)
        return {k: torch.from_numpy(a) for k, a in self.arrays.items()}, parts

    def _allocate(self, n_steps: int) -> None:
        """One shared block per buffer, [n_steps, n_envs, ...] (made again when n_steps
        changes)."""
        self._free()
        for key, (shape, dtype) in buffer_shapes(n_steps, self.n_envs, self.obs_size).items():
            np_dtype = torch.empty((), dtype=dtype).numpy().dtype
            block = SharedMemory(create=True, size=max(1, int(np.prod(shape)) *
                                                        np_dtype.itemsize))
            self.blocks[key] = block
            self.arrays[key] = np.ndarray(shape, np_dtype, buffer=block.buf)
        self.n_steps = n_steps

    def _free(self) -> None:
        self.arrays = {}
        for block in self.blocks.values():
            block.close()
            block.unlink()
        self.blocks = {}
        self.n_steps = 0

    def _reply(self, conn: Any) -> Any:
        try:
            status, value = conn.recv()
        except (EOFError, ConnectionResetError):
            raise ChildProcessError(GONE) from None
        if status == "error":
            raise ChildProcessError(f"a rollout worker failed: {value}")
        return value

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("stop", ()))
            except (BrokenPipeError, OSError):
                pass
        # an idle worker stops at once; one mid-rollout (Ctrl-C) would finish it first, for
        # seconds: nothing of it is kept, so it is killed after 1 s in all (Ctrl-C: < 5 s)
        deadline = time.monotonic() + 1.0
        for proc in self.procs:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=1.0)
        self._free()


def _serve(conn: Any, cfg: TrainConfig, shards: list[int], n_features: int) -> None:
    """A worker process: build the shards, then answer the learner's calls until ``stop``."""
    worker_init()
    from allfives_agents.evaluation.threads import limit_blas_threads

    limit_blas_threads(1)
    attached: dict[str, SharedMemory] = {}
    try:
        group = ShardGroup(cfg, shards, n_features)
        conn.send(("ok", None))  # built
    except Exception as exc:  # noqa: BLE001 (said to the learner in one line)
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    try:
        while True:
            method, args = conn.recv()
            if method == "stop":
                break
            try:
                if method == "collect_into":
                    value: Any = _collect_into(group, attached, *args)
                else:
                    value = getattr(group, method)(*args)
                conn.send(("ok", value))
            except Exception:  # noqa: BLE001
                conn.send(("error", traceback.format_exc().strip().splitlines()[-1]))
    except (EOFError, KeyboardInterrupt):
        pass
    finally:
        group.close()
        for block in attached.values():
            block.close()


def _collect_into(group: ShardGroup, attached: dict[str, SharedMemory], n_steps: int,
                  epsilon: float | None, spec: dict[str, tuple[str, tuple[int, ...], str]],
                  ranges: dict[int, tuple[int, int]]) -> dict[int, dict[str, Any]]:
    """The group's rollout written into the learner's shared buffers (each shard into its
    columns); returns each shard's next obs and mask and its games ended and won."""
    arrays = {}
    for key, (name, shape, dtype) in spec.items():
        if name not in attached:
            attached[name] = SharedMemory(name=name)
        arrays[key] = np.ndarray(shape, np.dtype(dtype), buffer=attached[name].buf)
    out = {i: {k: torch.from_numpy(a[:, ranges[i][0]:ranges[i][1]]) for k, a in arrays.items()}
           for i in group.shards}
    parts = group.collect(n_steps, epsilon, out)
    for part in parts.values():
        del part["buf"]
    return parts
