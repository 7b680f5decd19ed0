"""A belief over the other seats' hands, learned as an auxiliary task (``belief_aux``).

A linear head on the actor's last hidden layer predicts, tile by tile, whether each other
seat holds it (one logit per tile and seat, binary cross-entropy against the hands the deal
actually gave them: a training signal from hidden information). Its loss, weighted by
``belief_aux``, is added to the learner's, so the torso that the move logits read is shaped
to carry what passes, draws and plays reveal about the hidden hands (Suphx and PerfectDou
use hidden information in training the same way: never as an input of what plays).

The head (:meth:`allfives_train.fast_net.ResidualActorCritic.add_belief`, which ``make_net`` calls
when ``belief_aux`` is set) is part of the training state (and of ``--resume``) but not of
the checkpoint, which holds the actor alone: what plays never sees a hidden hand, and a
checkpoint trained with it loads and plays as any other ``action_features`` checkpoint, at
the same cost.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from allfives_env.observation import HIDDEN_HANDS_SIZE
from allfives_train.config import TrainConfig
from allfives_train.fast_net import AgentNet, ResidualActorCritic

TILES = HIDDEN_HANDS_SIZE // 3  # one slot per tile in each other seat's block


def sees_hidden(cfg: TrainConfig) -> bool:
    """Whether the learner's observations end with the hidden hands (an oracle critic or a
    belief head reads them; the actor never does)."""
    return bool(cfg.oracle_critic or cfg.belief_aux > 0)


def loss(net: AgentNet, obs: torch.Tensor, players: int) -> torch.Tensor:
    """The belief head's mean binary cross-entropy on learner observations ``obs`` (which end
    with the :data:`~allfives_env.observation.HIDDEN_HANDS_SIZE` hidden values), on the last
    hidden layer that the actor's ``logits`` computed for this very tensor if it did (the
    update's minibatch: the torso runs once), else computed here."""
    assert isinstance(net, ResidualActorCritic) and net.belief is not None
    kept, net.last_hidden = net.last_hidden, None
    if kept is not None and kept[0] is obs:  # the update's logits ran the torso on obs
        h = kept[1]
    else:
        h = net.torso[:-1](obs[:, :net.obs_size])
    start = obs.shape[1] - HIDDEN_HANDS_SIZE
    target = obs[:, start:start + (players - 1) * TILES]
    return F.binary_cross_entropy_with_logits(net.belief(h), target)


def add_term(loss_: torch.Tensor, net: AgentNet, obs: torch.Tensor, cfg: TrainConfig,
             totals: dict[str, float]) -> torch.Tensor:
    """``loss_`` plus ``belief_aux`` times the belief loss on ``obs`` (counted in
    ``totals["belief_loss"]``), or ``loss_`` itself when ``belief_aux`` is 0."""
    if not cfg.belief_aux:
        return loss_
    b_loss = loss(net, obs, cfg.players)
    totals["belief_loss"] = totals.get("belief_loss", 0.0) + float(b_loss.detach())
    return loss_ + cfg.belief_aux * b_loss
