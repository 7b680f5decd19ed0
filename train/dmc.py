"""Deep Monte-Carlo (``algo: dmc``): the action_features actor read as a value of every legal
move and regressed on the returns of its own games, in the spirit of DouZero.

The actor's logits ``z`` become action values through a dueling head,
``Q(s, a) = V(s) + dmc_scale * (z[a] - mean of z over the legal moves)``, with ``V`` the
critic; the learner plays the argmax of ``z`` with probability ``1 - dmc_epsilon`` and a
uniformly random legal move otherwise, and every decision's ``Q`` of the move played is
regressed (mean squared error) on the discounted return that followed it (Monte-Carlo,
bootstrapped from ``V`` only where a rollout cuts a game; with ``dmc_lambda`` below 1, the
lambda-return, which mixes in ``V`` of the states that follow). Since only the
argmax of ``z`` plays, the exported checkpoint is the actor as every other ``action_features``
checkpoint and loads as ``ckpt:`` anywhere.

Rollouts (:func:`allfives_train.shards.collect` with ``epsilon``, on ``rollout_workers``),
opponents, hooks, checkpoints and resume are those of the fast path (:mod:`allfives_train.fastppo`);
this module holds only what differs: acting and the update.
"""

from __future__ import annotations

from typing import Any

import torch

from allfives_train import belief
from allfives_train.config import TrainConfig
from allfives_train.fast_net import AgentNet, check_generator

ALGO = "Deep Monte-Carlo (train/dmc.py): the actor's logits as action values, regressed on " \
       "the returns of epsilon-greedy self-play against an opponent pool"


def act(agent: AgentNet, obs: torch.Tensor, mask: torch.Tensor, epsilon: float,
        generator: torch.Generator | None = None) -> torch.Tensor:
    """The argmax legal move per row, or with probability ``epsilon`` a uniform legal one
    (drawn on ``obs``'s device from ``generator``, which must live there; default: torch's
    global one)."""
    check_generator(generator, obs.device)
    with torch.no_grad():
        greedy = agent.logits(obs, mask).argmax(-1)
        explore = torch.rand(len(obs), generator=generator, device=obs.device) < epsilon
        if bool(explore.any()):
            u = torch.rand(mask.shape, generator=generator,
                           device=obs.device).masked_fill(~mask, -1.0)
            greedy = torch.where(explore, u.argmax(-1), greedy)
    return greedy


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
            loss = belief.add_term(loss, agent, o, cfg, totals)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm)
            optimizer.step()
            totals["q_loss"] += float(q_loss.detach())
            count += 1
    return {k: v / max(count, 1) for k, v in totals.items()}
