"""Can the network learn the solved end of the hand at all? (issue 11; experiments/log.md,
"The end of a hand, solved (fourteenth session)")

Fits `dmc4_all_fives_2p` to the solved positions alone of a ``label.py`` folder (Adam, the
soft targets ``allfives train`` uses, batches of 512) and prints, after each epoch, the share
of positions where its move is the solver's best and the points given away, on (up to 20,000
of) the positions it is fitted to and on a held-out folder. Run from the repository root:

    PYTHONPATH=. python experiments/dmc/endgame/capacity.py runs/endgame/labels \\
        runs/endgame_test/labels 3e-4 12
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_train.algorithms.ppo_batched.net import ResidualActorCritic, actor_from
from allfives_train.algorithms.search_distill.label import load_shards
from allfives_train.algorithms.search_distill.trainer import Targets, one_pass

POINTS_PER_UNIT = 0.5  # label.py's --points-per-logit


def solved_only(folder: str) -> dict[str, np.ndarray]:
    paths = sorted(Path(folder).glob("shard_*.npz"))
    d = load_shards(paths)
    keep = np.concatenate([np.load(p)["solved"] for p in paths])
    return {k: v[keep] for k, v in d.items()}


def score(net: ResidualActorCritic, t: Targets, rows: torch.Tensor) -> str:
    with torch.no_grad():
        chosen = t.logits(net, rows).argmax(1)
        val = t.val[rows].masked_fill(t.act[rows] < 0, -1e9)
        lost = (val.max(1).values - val.gather(1, chosen[:, None])[:, 0]) * POINTS_PER_UNIT
    return f"best {float((lost < 1e-6).float().mean()):.1%}, {float(lost.mean()):.2f} points"


def main(train: str, test: str, lr: float, epochs: int) -> None:
    torch.set_num_threads(1)
    tr, te = Targets(solved_only(train), 1.0, 0), Targets(solved_only(test), 1.0, 0)
    net = actor_from(NumpyPolicy.load("experiments/checkpoints/dmc4_all_fives_2p/policy.npz"))
    seen, held = torch.arange(min(20_000, len(tr.act))), torch.arange(len(te.act))
    print(f"{len(tr.act)} positions fitted, {len(te.act)} held out; at the start: fitted "
          f"{score(net, tr, seen)}, held out {score(net, te, held)}", flush=True)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    rng = np.random.default_rng(0)
    for epoch in range(epochs):
        one_pass(net, opt, tr, rng.permutation(len(tr.act)), 512, 1.0)
        print(f"epoch {epoch + 1}: fitted {score(net, tr, seen)}, held out "
              f"{score(net, te, held)}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit("usage: capacity.py LABELS HELD_OUT_LABELS STEP_SIZE EPOCHS")
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))
