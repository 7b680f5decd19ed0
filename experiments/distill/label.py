"""Search-distillation experiment (issue 11), step 1: label positions with `search`'s values.

Plays 2-seat all_fives games in which each move is, with probability ``p_teacher``, the
best move of ``search:sims=256,depth=2`` and otherwise the student's (the shipped
checkpoint's) move; at every decision with a real choice it records the acting seat's
observation, the per-action features of its legal moves and each legal move's rollout mean
from the search (points, common random numbers). Run from the repository root:

    PYTHONPATH=. python experiments/distill/label.py SEED DECISIONS OUT.npz

The output is rewritten every 60 games, so a stopped run keeps what it labelled. The
labeller is :class:`allfives_train.algorithms.search_distill.label.Labeller`, the one ``allfives
train`` uses with
``algo: search_distill`` (configs/train/distill_2p.yaml), which supersedes this script.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from allfives_agents.trained.checkpoint import load_checkpoint
from allfives_env.game.match import play_game
from allfives_env.game.rules import make_rules
from allfives_train.algorithms.search_distill.label import Labeller, pad_moves

L = 48  # most legal moves recorded per position (padded with -1)


def save(labeller: Labeller, out: str) -> None:
    """The rows, move lists padded to ``L`` (the layout fit.py reads)."""
    d = pad_moves(labeller.arrays(), L)
    np.savez(out, obs=d["obs"], feat=d["feat"], act=d["act"], val=d["val"])


def label(seed: int, decisions: int, out: str, ckpt: str = "experiments/checkpoints/ppo_all_fives_2p",
          sims: int = 256, depth: int = 2, p_teacher: float = 0.5) -> None:
    rules = make_rules("all_fives", players=2)
    labeller = Labeller(seed, f"search:sims={sims},depth={depth}", load_checkpoint(ckpt)[2],
                        p_teacher)
    t0, games = time.time(), 0
    while len(labeller.rows["act"]) < decisions:
        play_game(rules, [labeller, labeller], int(labeller.rng.integers(1 << 31)), log=False)
        games += 1
        if games % 60 == 0:
            print(f"{games} games {len(labeller.rows['act'])} decisions "
                  f"{time.time() - t0:.0f}s", flush=True)
            save(labeller, out)
    save(labeller, out)


if __name__ == "__main__":
    label(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
