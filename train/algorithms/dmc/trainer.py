"""Deep Monte-Carlo (``algo: dmc``): the actor read as a value of every legal move and
regressed on the returns of its own games, in the spirit of DouZero. The actor is the
``action_features`` one (each move scored from its features: the registered ones, or an env
action view's rows with ``actor.action_view``) or, with ``policy: mlp``, an MLP giving the 140
moves' values from the observation alone.

The actor's logits ``z`` become action values through a dueling head,
``Q(s, a) = V(s) + dmc_scale * (z[a] - mean of z over the legal moves)``, with ``V`` the
critic; the learner plays the argmax of ``z`` with probability ``1 - dmc_epsilon`` and a
uniformly random legal move otherwise, and every decision's ``Q`` of the move played is
regressed (mean squared error) on the discounted return that followed it (Monte-Carlo,
bootstrapped from ``V`` only where a rollout cuts a game; with ``dmc_lambda`` below 1, the
lambda-return, which mixes in ``V`` of the states that follow). Since only the
argmax of ``z`` plays, the exported checkpoint is the actor as the fast path's of the same
policy and loads as ``ckpt:`` anywhere.

:func:`train` runs the fast path's loop (:func:`allfives_train.algorithms.ppo_batched.loop.run`:
rollouts with
``epsilon`` on ``rollout_workers``, opponents, hooks, checkpoints and resume, as
``ppo_batched``'s) with DMC's round, :func:`learn`; this module holds what differs: acting,
the returns and the update (its acting, with ``epsilon``, is
:func:`allfives_train.algorithms.ppo_batched.net.epsilon_greedy`, which the rollouts call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from allfives_train.algorithms.dmc.section import DMC
from allfives_train.algorithms.ppo_batched import loop as fast_loop
from allfives_train.algorithms.ppo_batched.loop import gae
from allfives_train.algorithms.ppo_batched.net import AgentNet
from allfives_train.config import TrainConfig
from allfives_train.games.rollouts import Rollouts
from allfives_train.shell.hooks import Hook

ALGO = "Deep Monte-Carlo (train/algorithms/dmc/trainer.py): the actor's logits as action " \
       "values, regressed on the returns of epsilon-greedy self-play against an opponent pool"


def train(cfg: TrainConfig, resume: bool = False, quiet: bool = False,
          started: float | None = None, hooks: tuple[Hook, ...] = ()) -> Path:
    """Train with Deep Monte-Carlo as ``cfg`` says (the loop:
    :func:`allfives_train.algorithms.ppo_batched.loop.run`); returns the final checkpoint
    directory."""
    return fast_loop.run(cfg, learn, ALGO, resume, quiet, started, hooks)


def learn(agent: AgentNet, optimizer: torch.optim.Optimizer, envs: Rollouts,
          cfg: TrainConfig, device: torch.device) -> dict[str, float]:
    """One round: a rollout of epsilon-greedy play, its (lambda-)returns, the Q regression."""
    own = cfg.section(DMC)
    batch, obs = envs.collect(agent, cfg.n_steps, own.epsilon, device)
    _, returns = gae(batch, agent, obs, cfg.gamma, own.td_lambda, device)
    stats = update(agent, optimizer, batch, returns, cfg, own.scale)
    stats.update(batch.pop("pool"))
    return stats


def q_taken(agent: AgentNet, obs: torch.Tensor, mask: torch.Tensor, actions: torch.Tensor,
            scale: float) -> torch.Tensor:
    """``Q(s, a)`` of the moves played: the critic plus the scaled, centred logit."""
    z = agent.logits(obs, mask).masked_fill(~mask, 0.0)
    legal = mask.sum(-1).clamp(min=1)
    centred = z.gather(1, actions[:, None])[:, 0] - z.sum(-1) / legal
    return agent.value(obs) + scale * centred


def update(agent: AgentNet, optimizer: torch.optim.Optimizer, buf: dict[str, Any],
           returns: torch.Tensor, cfg: TrainConfig, scale: float) -> dict[str, float]:
    """``n_epochs`` passes of the Q regression over shuffled minibatches of ``batch_size``."""
    obs, mask = buf["obs"].flatten(0, 1), buf["mask"].flatten(0, 1)
    actions, ret = buf["actions"].flatten(), returns.flatten()
    size, count = obs.shape[0], 0
    totals = {"q_loss": 0.0}
    for _ in range(cfg.n_epochs):
        order = torch.randperm(size, device=obs.device)
        for start in range(0, size, cfg.batch_size):
            idx = order[start:start + cfg.batch_size]
            o = obs[idx]
            loss = q_loss = ((q_taken(agent, o, mask[idx], actions[idx], scale)
                              - ret[idx]) ** 2).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm)
            optimizer.step()
            totals["q_loss"] += float(q_loss.detach())
            count += 1
    return {k: v / max(count, 1) for k, v in totals.items()}
