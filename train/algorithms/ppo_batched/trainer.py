"""The fast path of ``allfives train`` (``algo: ppo_batched``): masked PPO in torch, in the
spirit of CleanRL's ``ppo.py``: each round (:func:`learn`) collects ``n_steps`` steps of every
env with the current weights (whole batches, no Python loop over envs), computes GAE
advantages and takes ``n_epochs`` passes of clipped PPO over minibatches of ``batch_size``.
The loop around it (the network, the rollout workers, the hooks, checkpoints, resume and
``final/``) is :func:`allfives_train.algorithms.ppo_batched.loop.run`, which ``dmc``
(train/algorithms/dmc/trainer.py) shares,
inside the run shell (train/shell/run.py).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from allfives_agents.evaluation.threads import limit_blas_threads
from allfives_train.algorithms.ppo_batched import loop as fast_loop
from allfives_train.algorithms.ppo_batched.loop import gae
from allfives_train.algorithms.ppo_batched.net import (
    AgentNet,
    features_of,
    log_prob_entropy,
    make_net,
    resolve_device,
)
from allfives_train.algorithms.ppo_batched.precision import choose_precision
from allfives_train.config import ACTOR, TrainConfig
from allfives_train.games.rollouts import Rollouts
from allfives_train.ppo_section import PPO
from allfives_train.shell.budget import Budget
from allfives_train.shell.hooks import ALGO, Hook

__all__ = ["gae", "learn", "timed_learn", "train", "update"]


def train(cfg: TrainConfig, resume: bool = False, quiet: bool = False,
          started: float | None = None, hooks: tuple[Hook, ...] = ()) -> Path:
    """Train with PPO as ``cfg`` says (the loop:
    :func:`allfives_train.algorithms.ppo_batched.loop.run`);
    returns the final checkpoint directory. ``started``, ``hooks``: as there."""
    return fast_loop.run(cfg, learn, ALGO, resume, quiet, started, hooks)


def learn(agent: AgentNet, optimizer: torch.optim.Optimizer, envs: Rollouts,
          cfg: TrainConfig, device: torch.device) -> dict[str, float]:
    """One round: a rollout of the current policy, its GAE advantages, PPO's update."""
    batch, obs = envs.collect(agent, cfg.n_steps, None, device)
    ppo = cfg.section(PPO)
    advantages, returns = gae(batch, agent, obs, cfg.gamma, ppo.gae_lambda, device)
    stats = update(agent, optimizer, batch, advantages, returns, cfg)
    stats.update(batch.pop("pool"))
    return stats


def update(agent: AgentNet, optimizer: torch.optim.Optimizer, buf: dict[str, Any],
           advantages: torch.Tensor, returns: torch.Tensor, cfg: TrainConfig
           ) -> dict[str, float]:
    """``n_epochs`` passes of clipped PPO over shuffled minibatches of ``batch_size``."""
    obs, mask = buf["obs"].flatten(0, 1), buf["mask"].flatten(0, 1)
    actions, old_logp = buf["actions"].flatten(), buf["logp"].flatten()
    adv_all, ret_all = advantages.flatten(), returns.flatten()
    size = obs.shape[0]
    totals = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "clip_frac": 0.0}
    count, ppo = 0, cfg.section(PPO)
    for _ in range(cfg.n_epochs):
        order = torch.randperm(size, device=obs.device)
        for start in range(0, size, cfg.batch_size):
            # the minibatch's rows in storage order (the same set: its loss is a mean) read
            # the rollout's memory forwards; gathered once for the actor and the critic
            idx = order[start:start + cfg.batch_size].sort().values
            o = obs[idx]
            logp, entropy = log_prob_entropy(agent.logits(o, mask[idx]), actions[idx])
            ratio = torch.exp(logp - old_logp[idx])
            adv = adv_all[idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg = -torch.min(adv * ratio,
                            adv * ratio.clamp(1 - ppo.clip_range, 1 + ppo.clip_range)).mean()
            v_loss = ((agent.value(o) - ret_all[idx]) ** 2).mean()
            loss = pg + ppo.vf_coef * v_loss - ppo.ent_coef * entropy.mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                totals["policy_loss"] += float(pg)
                totals["value_loss"] += float(v_loss)
                totals["entropy"] += float(entropy.mean())
                totals["clip_frac"] += float(((ratio - 1).abs() > ppo.clip_range).float()
                                             .mean())
            count += 1
    return {k: v / max(count, 1) for k, v in totals.items()}


def timed_learn(cfg: TrainConfig, steps: int) -> tuple[int, float, float]:
    """The loop alone (rollouts, ``self`` refreshes and PPO updates; no evaluation or
    checkpoints) for at least ``steps`` steps after one warm-up rollout: (steps, wall-clock
    seconds, CPU seconds of this process); for ``allfives_train.benchmarks.bench``."""
    torch.set_num_threads(cfg.torch_threads)
    limit_blas_threads(1)
    device = resolve_device(cfg.device)
    policy = cfg.section(ACTOR).policy
    agent = make_net(cfg, choose_precision(cfg.precision, device, policy).precision
                     ).to(device)
    envs = Rollouts(cfg, agent, features_of(agent), device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.learning_rate, eps=1e-5)
    envs.reset(seed=cfg.seed)
    rollout = cfg.n_envs * cfg.n_steps
    rounds = 1 + max(1, Budget(steps, "steps", "total_steps", rollout).end() // rollout)
    for i in range(rounds):
        if i == 1:
            start, cpu = time.perf_counter(), time.process_time()
        envs.set_self(agent.numpy_policy().arrays())
        learn(agent, optimizer, envs, cfg, device)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    envs.close()
    return (rounds - 1) * rollout, elapsed, cpu
