"""Search-distillation experiment (issue 11), step 1: label positions with `search`'s values.

Plays 2-seat all_fives games in which each move is, with probability ``p_teacher``, the
best move of ``search:sims=256,depth=2`` and otherwise the student's (the shipped
checkpoint's) move; at every decision with a real choice it records the acting seat's
observation, the per-action features of its legal moves and each legal move's rollout mean
from the search (points, common random numbers). Run from the repository root:

    PYTHONPATH=. python results/distill/label.py SEED DECISIONS OUT.npz

The output is rewritten every 60 games, so a stopped run keeps what it labelled.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from agents.action_features import N_FEATURES, action_features
from agents.checkpoint import CheckpointAgent
from agents.search import SearchAgent
from allfives_env.match import Obs, play_game
from allfives_env.rules import make_rules
from allfives_env.view import SeatView

L = 48  # most legal moves recorded per position (padded with -1)


class Labeller:
    """A seat (both seats of every game) that records each real choice with the search's
    per-move values, then plays the search's best move or the student's."""

    needs_obs = True

    def __init__(self, seed: int, ckpt: str, sims: int, depth: int, p_teacher: float) -> None:
        self.rng = np.random.default_rng(seed)
        self.student = CheckpointAgent(ckpt)
        self.teacher = SearchAgent(seed, sims=sims, depth=depth)
        self.p_teacher = p_teacher
        self.rows: dict[str, list[np.ndarray]] = {"obs": [], "feat": [], "act": [], "val": []}

    def reset(self, seed: int | None = None) -> None:
        """One labeller plays every game: its generators run on across games."""

    def act(self, obs: Obs, view: SeatView) -> int:
        quick = self.teacher.obvious(view)
        if quick is not None:
            return quick
        legal = list(view.legal)
        worlds = max(self.teacher.min_worlds, self.teacher.sims // len(legal))
        totals, weight = self.teacher.rollout_totals(view, legal, worlds)
        means = np.asarray(totals) / weight
        k = len(legal)
        act = np.full(L, -1, np.int16)
        act[:k] = legal
        val = np.zeros(L, np.float32)
        val[:k] = means
        feat = np.zeros((L, N_FEATURES), np.float16)
        feat[:k] = action_features(view)[legal]
        for key, row in zip(("obs", "feat", "act", "val"),
                            (obs["observation"].astype(np.float16), feat, act, val)):
            self.rows[key].append(row)
        if self.rng.random() < self.p_teacher:
            return legal[int(np.argmax(means))]
        return self.student.act(obs, view)

    def save(self, out: str) -> None:
        np.savez(out, **{k: np.asarray(v) for k, v in self.rows.items()})


def label(seed: int, decisions: int, out: str, ckpt: str = "checkpoints/ppo_all_fives_2p",
          sims: int = 256, depth: int = 2, p_teacher: float = 0.5) -> None:
    rules = make_rules("all_fives", players=2)
    labeller = Labeller(seed, ckpt, sims, depth, p_teacher)
    t0, games = time.time(), 0
    while len(labeller.rows["act"]) < decisions:
        play_game(rules, [labeller, labeller], int(labeller.rng.integers(1 << 31)), log=False)
        games += 1
        if games % 60 == 0:
            print(f"{games} games {len(labeller.rows['act'])} decisions "
                  f"{time.time() - t0:.0f}s", flush=True)
            labeller.save(out)
    labeller.save(out)


if __name__ == "__main__":
    label(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
