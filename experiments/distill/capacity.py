"""Is the student short of capacity or of data? (issue 11)

Fits a checkpoint's actor to a run's label shards as ``allfives train`` does
(allfives_train.algorithms.search_distill.trainer:
the same held-out split, rescale and loss), either alone (``base``) or with a per-move MLP
head added to its logits (``pair``: [torso output, the move's 9 features, tile one-hot, end
one-hot] -> 128 -> 128 -> 1, started at 0 so the start is the checkpoint). Prints the training
cross-entropy and the held-out agreement, regret and cross-entropy after each epoch. Run from
the repository root:

    PYTHONPATH=. python experiments/distill/capacity.py LABELS_DIR CHECKPOINT base|pair EPOCHS [TAU]

e.g. ``runs/distill_round2_all_fives_2p/labels experiments/checkpoints/distill_all_fives_2p base
10``
(the split is seed 1, the round-2 config's, so its held-out positions are ones round 2 did
not fit).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from allfives_agents.trained.checkpoint import load_checkpoint
from allfives_env.game.tiles import N_ENDS, N_TILES
from allfives_train.algorithms.ppo_batched.net import actor_from
from allfives_train.algorithms.search_distill.label import load_shards
from allfives_train.algorithms.search_distill.trainer import Targets, legal_logits, rescale


class Pair(nn.Module):
    """The actor's logits plus a per-move MLP head (its last layer at 0)."""

    def __init__(self, base: Any, width: int = 128) -> None:
        super().__init__()
        self.base = base
        self.g = nn.Sequential(nn.Linear(base.feat.in_features + 9 + N_TILES + N_ENDS, width),
                               nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                               nn.Linear(width, 1))
        nn.init.zeros_(self.g[-1].weight)
        nn.init.zeros_(self.g[-1].bias)

    def forward(self, obs: torch.Tensor, feat: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        h = self.base.torso[:-1](obs)
        a = act.clamp(min=0)
        x = torch.cat([h[:, None].expand(-1, act.shape[1], -1), feat,
                       nn.functional.one_hot(a // N_ENDS, N_TILES).float(),
                       nn.functional.one_hot(a % N_ENDS, N_ENDS).float()], -1)
        return legal_logits(self.base, obs, feat, act) + self.g(x).squeeze(-1) * (act >= 0)


def main(labels: str, checkpoint: str, mode: str, epochs: int, tau: float = 1.0) -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    data = Targets(load_shards(sorted(Path(labels).glob("shard_*.npz"))), tau, 1)
    base = actor_from(load_checkpoint(checkpoint)[2])
    net: Any = base if mode == "base" else Pair(base)

    def logits(i: Any) -> torch.Tensor:
        return data.logits(base, i) if mode == "base" else net(data.obs[i], data.feat[i],
                                                                data.act[i])

    def held_out() -> dict[str, float]:
        with torch.no_grad():
            t = torch.as_tensor(data.test)
            z = logits(t)
            chosen, best = z.argmax(1), data.best[t]
            regret = (data.val[t].gather(1, best[:, None])
                      - data.val[t].gather(1, chosen[:, None])).mean()
            return {"agree": round(float((chosen == best).float().mean()), 4),
                    "regret": round(float(regret), 4),
                    "cross_entropy": round(float(data.loss(z, t)), 4)}

    print("start", held_out(), "logits x", round(rescale(base, data), 3), flush=True)
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-4)
    rng = np.random.default_rng(0)
    order = data.train.copy()
    for epoch in range(epochs):
        rng.shuffle(order)
        total = 0.0
        for s in range(0, len(order), 512):
            i = torch.as_tensor(order[s:s + 512])
            loss = data.loss(logits(i), i)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            optimizer.step()
            total += float(loss.detach()) * len(i)
        print(epoch + 1, "train cross-entropy", round(total / len(order), 4), "held out",
              held_out(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]),
         float(sys.argv[5]) if len(sys.argv) > 5 else 1.0)
