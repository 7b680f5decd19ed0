"""How often is each network's move the solver's best near the end of a hand? (issue 11;
experiments/log.md, "The end of a hand, solved (fourteenth session)")

Reads a label folder written by ``label.py`` (a seed the fit did not see) and, for each
network given: on the solved positions, the share where its move is the solver's best and the
points it gives away against that best (in all, and leaving out the moves that decide the game
within the hand); on the others, the share where its move is the labelling network's. Run from
the repository root:

    PYTHONPATH=. python experiments/dmc/endgame/label.py runs/endgame_test --seed 15 --shards 0-9
    PYTHONPATH=. python experiments/dmc/endgame/heldout.py runs/endgame_test/labels \\
        experiments/checkpoints/dmc4_all_fives_2p runs/distill_endgame_all_fives_2p/final
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.algorithms.search_distill.label import load_shards

POINTS_PER_UNIT = 0.5  # label.py's --points-per-logit
DECIDES = 100.0  # a gap this large in points is a game won or lost within the hand


def inputs(d: dict[str, np.ndarray], k: int) -> np.ndarray:
    """The policies' input rows: the observation, then every action's features."""
    n = len(d["act"])
    x = np.zeros((n, OBS_SIZE + N_ACTIONS * k), np.float32)
    x[:, :OBS_SIZE] = d["obs"]
    feats = x[:, OBS_SIZE:].reshape(n, N_ACTIONS, k)
    rows, cols = np.nonzero(d["act"] >= 0)
    feats[rows, d["act"][rows, cols]] = d["feat"][rows, cols]
    return x


def main(folder: str, nets: list[str]) -> None:
    paths = sorted(Path(folder).glob("shard_*.npz"))
    d = load_shards(paths)
    solved = np.concatenate([np.load(p)["solved"] for p in paths])
    legal = d["act"] >= 0
    val = np.where(legal, d["val"], -np.inf)
    best, own = val.max(1), val.argmax(1)  # on unsolved rows the values are the logits
    print(f"{len(solved)} positions, {solved.sum()} solved")
    for net in nets:
        policy = NumpyPolicy.load(Path(net) / "policy.npz")
        z = policy.logits(inputs(d, policy.n_features))  # type: ignore[attr-defined]
        chosen = np.where(legal, np.take_along_axis(z, np.maximum(d["act"], 0), 1),
                          -np.inf).argmax(1)
        lost = (best - val[np.arange(len(chosen)), chosen]) * POINTS_PER_UNIT
        s, decides = solved, lost >= DECIDES
        print(f"{net}: solved positions: its move the best {np.mean(lost[s] < 1e-6):.1%}, "
              f"{lost[s].mean():.2f} points given away ({lost[s & ~decides].mean():.2f} "
              f"without the {decides[s].mean():.1%} that decide the game); elsewhere the "
              f"labelling network's move {np.mean(chosen[~s] == own[~s]):.1%}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit("usage: heldout.py LABELS_FOLDER NETWORK_DIR [NETWORK_DIR ...]")
    main(sys.argv[1], sys.argv[2:])
