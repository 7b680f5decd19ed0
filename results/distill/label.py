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

from agents.action_features import action_features
from agents.checkpoint import CheckpointAgent
from agents.search import SearchAgent
from allfives_env.match import new_game, seat_input
from allfives_env.rules import make_rules

L = 48  # most legal moves recorded per position (padded with -1)


def label(seed: int, decisions: int, out: str, ckpt: str = "checkpoints/ppo_all_fives_2p",
          sims: int = 256, depth: int = 2, p_teacher: float = 0.5) -> None:
    rules = make_rules("all_fives", players=2)
    rng = np.random.default_rng(seed)
    student = CheckpointAgent(ckpt)
    teacher = SearchAgent(seed, sims=sims, depth=depth)
    rows: dict[str, list[np.ndarray]] = {"obs": [], "feat": [], "act": [], "val": []}
    t0, games = time.time(), 0
    while len(rows["act"]) < decisions:
        state = new_game(rules, int(rng.integers(1 << 31)), log=False)
        games += 1
        while not state.game_over:
            if state.hand_over:
                state.next_hand()
                continue
            obs, view = seat_input(state, state.current)
            quick = teacher.obvious(view)
            if quick is not None:
                state.apply(quick)
                continue
            legal = list(view.legal)
            worlds = max(teacher.min_worlds, teacher.sims // len(legal))
            totals, weight = teacher.rollout_totals(view, legal, worlds)
            means = np.asarray(totals) / weight
            k = len(legal)
            act = np.full(L, -1, np.int16)
            act[:k] = legal
            val = np.zeros(L, np.float32)
            val[:k] = means
            feat = np.zeros((L, 9), np.float16)
            feat[:k] = action_features(view)[legal]
            rows["obs"].append(obs["observation"].astype(np.float16))
            rows["feat"].append(feat)
            rows["act"].append(act)
            rows["val"].append(val)
            move = legal[int(np.argmax(means))] if rng.random() < p_teacher \
                else student.act(obs, view)
            state.apply(move)
        if games % 60 == 0:
            print(f"{games} games {len(rows['act'])} decisions {time.time() - t0:.0f}s",
                  flush=True)
            np.savez(out, **{k: np.asarray(v) for k, v in rows.items()})
    np.savez(out, **{k: np.asarray(v) for k, v in rows.items()})


if __name__ == "__main__":
    label(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
