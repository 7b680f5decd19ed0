"""Rollout shards: the fast path's games cut into fixed shards, and one rollout of them.

:func:`make_vector_env` builds a shard's Gymnasium ``VectorEnv``, :func:`collect` plays
``n_steps`` steps of it under the learner's network, and :class:`ShardGroup` is what one
rollout worker holds (:mod:`allfives_train.games.rollouts` drives the workers;
:mod:`allfives_train.games.ray_rollouts` puts them on a Ray cluster). A shard is seeded by
``(seed, shard)`` alone and draws the learner's moves from its own ``torch.Generator`` (on
the device of the network that plays it), so its games do not depend on which worker plays
it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.algorithms.ppo_batched.net import (
    AgentNet,
    epsilon_greedy,
    generator_on,
    make_net,
    sample,
)
from allfives_train.config import ACTOR, FAST, POOL, TrainConfig, make_rules_for
from allfives_train.games.workers import cores


def make_vector_env(cfg: TrainConfig, rules: Rules, seed: int, n_features: int = 0) -> Any:
    """The learner's VectorEnv: batched (``engine: batched``, or ``auto`` when it imports)
    or scalar envs in a loop (``engine: scalar``, the fallback); ``n_features``: the
    per-action features the learner reads (policy action_features)."""
    kwargs: dict[str, Any] = {"seed": seed, "margin_reward": cfg.margin_reward,
                              "win_reward": cfg.win_reward}
    pool, actor = cfg.section(POOL), cfg.section(ACTOR)
    features = actor.policy == "action_features"
    if features:
        kwargs.update(per_action_inputs(actor.action_view, n_features))
    if cfg.engine in ("auto", "batched"):
        try:  # numba missing: an ImportError, or the engine's RuntimeError with the install line
            from allfives_train.games.vector_env import AllFivesVectorEnv as Batched

            return Batched(rules, cfg.n_envs, pool.opponents, partner=pool.partner,
                           snapshot_keep=pool.snapshot_keep, **kwargs)
        except (ImportError, RuntimeError) as exc:
            if isinstance(exc, RuntimeError) and "numba" not in str(exc):
                raise
            if cfg.engine == "batched" or features:
                raise ValueError(f"config engine='batched': the batched engine is not "
                                 f"available ({exc}); install the fast extra or use "
                                 "engine: scalar") from None
    from allfives_train.games.vector_fallback import ScalarLoopVectorEnv as Scalar

    return Scalar(rules, cfg.n_envs, pool.opponents, partner=pool.partner,
                  snapshot_keep=pool.snapshot_keep, **kwargs)


def per_action_inputs(action_view: str | None, n_features: int) -> dict[str, Any]:
    """The VectorEnv's keyword for the action_features actor's per-action inputs: an action
    view's rows (``action_view``), else the first ``n_features`` registered features."""
    if action_view is not None:
        return {"action_view": action_view}
    return {"action_features": n_features}


def learner_obs_size(cfg: TrainConfig, n_features: int) -> int:
    """The width of the learner's observations: the observation and ``n_features`` per
    action."""
    return OBS_SIZE + N_ACTIONS * n_features


def buffer_shapes(n_steps: int, n_envs: int, obs_size: int
                  ) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    """Each rollout buffer's shape and dtype (:data:`BUFFERS`)."""
    one = (n_steps, n_envs)
    return {"obs": ((*one, obs_size), torch.float32),
            "mask": ((*one, N_ACTIONS), torch.bool), "actions": (one, torch.int64),
            "logp": (one, torch.float32), "values": (one, torch.float32),
            "rewards": (one, torch.float32), "dones": (one, torch.float32)}


def collect(agent: AgentNet, envs: Any, obs: np.ndarray, mask: np.ndarray, n_steps: int,
            device: torch.device, epsilon: float | None = None,
            generator: torch.Generator | None = None, out: dict[str, torch.Tensor] | None = None
            ) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """``n_steps`` steps of every env under the current policy, as whole batches: sampled
    from its softmax (PPO), or with ``epsilon`` its argmax and, with that probability, a
    uniform legal move (:func:`~allfives_train.algorithms.ppo_batched.net.epsilon_greedy`, Deep
    Monte-Carlo's;
    ``logp`` is then not needed and left 0); the learner's random draws from ``generator``
    (default: torch's global one). ``games`` and ``wins``: the games that ended, and those
    the learner won. ``out``: write the buffers into these tensors ([n_steps, num_envs, ...]
    each, e.g. views of shared memory)."""
    if out is None:
        buf: dict[str, Any] = {key: torch.zeros(shape, dtype=dtype, device=device) for key,
                               (shape, dtype) in buffer_shapes(n_steps, envs.num_envs,
                                                               obs.shape[1]).items()}
    else:
        buf = dict(out)
        buf["logp"].zero_()
    games = wins = 0
    for t in range(n_steps):
        o = torch.as_tensor(obs, device=device)
        m = torch.as_tensor(mask, device=device)
        with torch.no_grad():
            if epsilon is None:
                logits = agent.logits(o, m)
                action = sample(logits, generator)
                buf["logp"][t] = torch.log_softmax(logits, -1).gather(1, action[:, None])[:, 0]
            else:
                action = epsilon_greedy(agent, o, m, epsilon, generator)
            buf["values"][t] = agent.value(o)
        buf["obs"][t], buf["mask"][t], buf["actions"][t] = o, m, action
        obs, reward, term, trunc, infos = envs.step(action.cpu().numpy())
        mask = infos["action_mask"]
        buf["rewards"][t] = torch.as_tensor(reward, device=device)
        buf["dones"][t] = torch.as_tensor(term | trunc, device=device)
        if "final_info" in infos:  # games that ended in this step
            games += int(infos["final_info"]["_won"].sum())
            wins += int(infos["final_info"]["won"].sum())
    buf["games"], buf["wins"] = games, wins
    return buf, obs, mask


#: what a shard's rollout returns, [n_steps, shard envs, ...] each (and the next obs / mask)
BUFFERS = ("obs", "mask", "actions", "logp", "values", "rewards", "dones")


def shard_sizes(n_envs: int, shards: int) -> list[int]:
    """``n_envs`` games cut into ``min(shards, n_envs)`` shards as equal as can be."""
    k = max(1, min(shards, n_envs))
    return [n_envs // k + (1 if i < n_envs % k else 0) for i in range(k)]


def shard_seed(seed: int, shard: int) -> int:
    """The seed of shard ``shard`` of a rollout seeded ``seed``."""
    return int(np.random.SeedSequence([seed, shard]).generate_state(1)[0])


#: ``rollout_workers: auto`` spreads rollouts of at least this many steps over every core
MIN_SPREAD_STEPS = 4096


def fixed_workers(cfg: TrainConfig) -> int | None:
    """``rollout_workers`` as a number, or None for ``auto`` (or null): one per core."""
    n = cfg.section(FAST).rollout_workers
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def resolve_workers(cfg: TrainConfig) -> int:
    """How many workers ``cfg`` gets: ``rollout_workers``, or one per core (``auto``; 1 for
    a rollout of fewer than :data:`MIN_SPREAD_STEPS` steps), and never more than there are
    shards."""
    fixed = fixed_workers(cfg)
    if fixed is not None:
        n = fixed
    else:  # a small rollout costs less in this process than starting workers would save
        n = cores() if cfg.n_envs * cfg.n_steps >= MIN_SPREAD_STEPS else 1
    return max(1, min(n, len(shard_sizes(cfg.n_envs, cfg.section(FAST).rollout_shards))))


def split(shards: int, workers: int) -> list[list[int]]:
    """Which shards each of ``workers`` workers holds (``k, k + workers, ...``)."""
    return [list(range(shards))[k::workers] for k in range(min(workers, shards))]


class ShardGroup:
    """Some shards of a rollout, as one worker holds them: a VectorEnv, a generator and the
    last observation per shard, and the network that plays the learner's seat."""

    def __init__(self, cfg: TrainConfig, shards: list[int], n_features: int,
                 agent: Any = None, device: torch.device | None = None) -> None:
        torch.set_num_threads(1)
        rules = make_rules_for(cfg)
        self.agent = agent if agent is not None else make_net(cfg)
        self.device = device or torch.device("cpu")
        sizes = shard_sizes(cfg.n_envs, cfg.section(FAST).rollout_shards)
        self.shards = shards
        self.envs = {i: make_vector_env(dataclasses.replace(cfg, n_envs=sizes[i]), rules,
                                        shard_seed(cfg.seed, i), n_features) for i in shards}
        self.gens: dict[int, torch.Generator] = {}
        self.last: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def reset(self, seed: int) -> None:
        for i, env in self.envs.items():
            obs, infos = env.reset(seed=shard_seed(seed, i))
            self.last[i] = (obs, infos["action_mask"])
            # on the device of the network that plays (the learner's, in this process)
            self.gens[i] = generator_on(self.device, shard_seed(seed + 1, i))

    def set_self(self, arrays: dict[str, np.ndarray]) -> None:
        for env in self.envs.values():
            env.set_self(arrays)

    def add_snapshot(self, arrays: dict[str, np.ndarray], name: str) -> None:
        for env in self.envs.values():
            env.add_snapshot(arrays, name)

    def load(self, weights: dict[str, np.ndarray]) -> None:
        """The learner's weights (numpy arrays by state-dict key)."""
        self.agent.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})

    def collect(self, n_steps: int, epsilon: float | None,
                out: dict[int, dict[str, torch.Tensor]] | None = None
                ) -> dict[int, dict[str, Any]]:
        """``n_steps`` steps of each shard: its buffers (``buf``: torch tensors, written into
        ``out[shard]`` when given), the next obs and mask, and the games ended and won."""
        parts: dict[int, dict[str, Any]] = {}
        for i, env in self.envs.items():
            obs, mask = self.last[i]
            buf, obs, mask = collect(self.agent, env, obs, mask, n_steps, self.device,
                                     epsilon, self.gens[i], None if out is None else out[i])
            self.last[i] = (obs, mask)
            parts[i] = {"buf": {k: buf[k] for k in BUFFERS}, "next_obs": obs,
                        "next_mask": mask, "games": buf["games"], "wins": buf["wins"]}
        return parts

    def close(self) -> None:
        for env in self.envs.values():
            env.close()
