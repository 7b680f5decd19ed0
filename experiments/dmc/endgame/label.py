"""Labels for fitting a network to the solved end of the hand (issue 11; experiments/log.md,
"The end of a hand, solved (fourteenth session)").

Both seats play the network (its best move; a random legal move with probability 0.05). At
each decision with a real choice:

* when at most ``--left`` tiles are left to draw and at most ``--cap`` tiles are in hands and
  boneyard, the row's values are :func:`solve.move_values` (8 sampled worlds; exact with
  nothing left to draw) divided by ``--points-per-logit`` (0.5: `dmc4_all_fives_2p`'s logits
  run about 2 to a point on these rows, the scale that fits its moves to the solved values
  best); the fit's target is then the softmax of the solved values in those units;
* otherwise, with probability ``--keep``, the row's values are the network's own logits, so
  that the fit keeps its play elsewhere as it was.

Shards ``OUT/labels/shard_<i>.npz`` in ``allfives train``'s label format, ``--games`` games
each, seeded by (seed, i), and ``OUT/config.yaml`` naming the game, as a ``search_distill``
run leaves them, so that ``distill_extra_labels: [OUT/labels]`` reads them. Run from the
repository root:

    PYTHONPATH=. python experiments/dmc/endgame/label.py runs/endgame \\
        --net experiments/checkpoints/dmc4_all_fives_2p --shards 0-299 --workers 2
"""

from __future__ import annotations

import argparse
import io
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from allfives_agents.base import Agent, Obs
from allfives_agents.features.action_features import policy_input
from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.match import play_game
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_env.game.view import SeatView
from allfives_train.algorithms.search_distill.label import KEYS, pack_rows, shard_path, shard_seed
from allfives_train.shell.checkpoints import write_bytes_atomic
from experiments.dmc.endgame.solve import move_values


class EndgameLabeller(Agent):
    """Both seats: the network's move, and a row per real choice (see the module)."""

    needs_obs = True

    def __init__(self, policy: NumpyPolicy, seed: int, args: argparse.Namespace) -> None:
        super().__init__(seed)
        self.policy, self.args = policy, args
        self.gen = np.random.default_rng(seed)
        self.k = int(policy.n_features)  # type: ignore[attr-defined]
        self.rows: dict[str, list[np.ndarray]] = {k: [] for k in KEYS}
        self.solved: list[bool] = []

    def reset(self, seed: int | None = None) -> None:
        """One labeller plays a whole shard: its generator runs on across games."""

    def act(self, obs: Obs, view: SeatView) -> int:
        legal = list(view.legal)
        if len(legal) == 1:
            return legal[0]
        x = policy_input(self.policy, obs["observation"], view)
        own = self.policy.logits(x)[legal]
        feat = x[OBS_SIZE:].reshape(N_ACTIONS, self.k)[legal]  # the features the policy read
        tiles = view.hand.bit_count() + view.unseen.bit_count()
        if view.drawable <= self.args.left and tiles <= self.args.cap:
            values = move_values(view, legal, 8, self.gen, self.args.budget)
            if values is not None:
                self._row(obs, feat, legal, np.asarray(values) / self.args.points_per_logit,
                          True)
        elif self.gen.random() < self.args.keep:
            self._row(obs, feat, legal, own, False)
        if self.gen.random() < 0.05:
            return legal[int(self.gen.integers(len(legal)))]
        return legal[int(np.argmax(own))]

    def _row(self, obs: Obs, feat: np.ndarray, legal: list[int], val: np.ndarray,
             solved: bool) -> None:
        self.rows["obs"].append(obs["observation"].astype(np.float16))
        self.rows["feat"].append(feat.astype(np.float16))
        self.rows["act"].append(np.asarray(legal, np.int16))
        self.rows["val"].append(val.astype(np.float32))
        self.solved.append(solved)

    def arrays(self) -> dict[str, np.ndarray]:
        return {**pack_rows(self.rows, self.k), "solved": np.asarray(self.solved, bool)}


def label_shard(task: tuple[int, argparse.Namespace]) -> tuple[int, int, int]:
    """Play and write one shard; (index, rows, solved rows)."""
    index, args = task
    policy = NumpyPolicy.load(Path(args.net) / "policy.npz")
    labeller = EndgameLabeller(policy, shard_seed(args.seed, index), args)
    rules = make_rules("all_fives", players=2)
    for _ in range(args.games):
        play_game(rules, [labeller, labeller], int(labeller.gen.integers(1 << 31)), log=False)
    data = labeller.arrays()
    buf = io.BytesIO()
    np.savez(buf, obs=data["obs"], feat=data["feat"], act=data["act"], val=data["val"],
             solved=data["solved"])
    write_bytes_atomic(shard_path(Path(args.out) / "labels", index), buf.getvalue())
    return index, len(data["act"]), int(data["solved"].sum())


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--net", default="experiments/checkpoints/dmc4_all_fives_2p")
    p.add_argument("--shards", default="0-299", help="first-last")
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--seed", type=int, default=14)
    p.add_argument("--left", type=int, default=3)
    p.add_argument("--cap", type=int, default=16)
    p.add_argument("--budget", type=int, default=3000, help="positions per world's search")
    p.add_argument("--keep", type=float, default=0.1)
    p.add_argument("--points-per-logit", type=float, default=0.5)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    first, last = (int(x) for x in args.shards.split("-"))
    labels = Path(args.out) / "labels"
    labels.mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "config.yaml").write_text("preset: all_fives\nplayers: 2\n")
    todo = [(i, args) for i in range(first, last + 1) if not shard_path(labels, i).exists()]
    with ProcessPoolExecutor(args.workers) as pool:
        for index, rows, solved in pool.map(label_shard, todo):
            print(f"shard {index}: {rows} rows, {solved} solved", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

