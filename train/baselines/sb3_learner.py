"""sb3-contrib MaskablePPO on the Gymnasium id, as a user would run it, for a CPU budget.

``python -m allfives_train.baselines.sb3_learner --view raw --seed 0 --cpu-seconds 120
--snapshots 5 --snapshot-dir DIR``: ``gymnasium.make("allfives/AllFives-v0", opponents=[...],
action_view=VIEW)`` in a ``DummyVecEnv`` of ``--n-envs`` games, ``MaskablePPO("MlpPolicy")``
from random weights (the ``facts`` view is the flat observation ``386 + 140 * 62``, the rows
after the observation, so the MLP reads them as plain inputs), one torch thread. The policy
is saved with ``allfives.save_policy`` at ``K`` evenly spaced fractions of the process's
CPU time (imports and set-up included), each to ``DIR/snap_k`` with a line in
``DIR/points.jsonl``; training stops at the budget.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

LAUNCHED = time.time()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The learner's options."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--view", choices=("raw", "facts", "heuristic"), default="raw")
    p.add_argument("--opponents", nargs="+", default=["heuristic"])
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cpu-seconds", type=float, required=True)
    p.add_argument("--snapshots", type=int, default=5)
    p.add_argument("--snapshot-dir", required=True)
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--n-steps", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--n-epochs", type=int, default=4)
    p.add_argument("--learning-rate", type=float, default=3e-4)
    return p.parse_args(argv)


def make_callback(args: argparse.Namespace) -> Any:
    """An SB3 callback that saves the snapshots at the CPU fractions and stops at the budget."""
    from stable_baselines3.common.callbacks import BaseCallback

    from allfives_agents.trained.save_policy import save_policy

    class Snapshots(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.saved = 0

        def _on_step(self) -> bool:
            cpu = time.process_time()
            while (self.saved < args.snapshots
                   and cpu >= args.cpu_seconds * (self.saved + 1) / args.snapshots):
                self.saved += 1
                folder = Path(args.snapshot_dir)
                save_policy(self.model, folder / f"snap_{self.saved}",
                            action_view=args.view, players=args.players)
                row = {"k": self.saved, "steps": int(self.num_timesteps), "cpu_s": cpu,
                       "wall_s": time.time() - LAUNCHED, "time": time.time()}
                with open(folder / "points.jsonl", "a") as fh:
                    fh.write(json.dumps(row) + "\n")
            return cpu < args.cpu_seconds

    return Snapshots()


def main(argv: list[str] | None = None) -> int:
    """Train until the CPU budget is spent."""
    args = parse_args(argv)
    import gymnasium
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    import allfives_env  # noqa: F401  (registers the Gymnasium ids)

    torch.set_num_threads(1)
    Path(args.snapshot_dir).mkdir(parents=True, exist_ok=True)
    env = make_vec_env(lambda: gymnasium.make("allfives/AllFives-v0", players=args.players,
                                              opponents=args.opponents,
                                              action_view=args.view),
                       n_envs=args.n_envs, seed=args.seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size,
                        n_epochs=args.n_epochs, learning_rate=args.learning_rate,
                        gamma=0.995, ent_coef=0.003, seed=args.seed, device="cpu",
                        policy_kwargs={"net_arch": [128, 128]})
    model.learn(total_timesteps=10**10, callback=make_callback(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
