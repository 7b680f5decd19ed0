"""Copy a fast-path checkpoint and give its policy.npz the run's critic from trainer.pt.

Checkpoints written before 2026-12-04 (commit adding NumpyPolicy.value) hold only the actor;
the run's trainer.pt (our own file, weights only) still has the critic.

    python experiments/value_search/attach_value.py RUN_DIR/final RUN_DIR/trainer.pt OUT_DIR
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import torch

from allfives_agents.policy_numpy import NumpyPolicy


def critic_layers(trainer: Path) -> list[tuple]:
    state = torch.load(trainer, map_location="cpu", weights_only=True)["agent"]
    names = sorted({k.rsplit(".", 1)[0] for k in state if k.startswith("critic.")},
                   key=lambda n: int(n.split(".")[1]))
    return [(state[f"{n}.weight"].float().numpy().T.copy(), state[f"{n}.bias"].float().numpy())
            for n in names]


def main(final: str, trainer: str, out: str) -> None:
    dest = Path(out)
    shutil.copytree(final, dest)
    policy = NumpyPolicy.load(dest / "policy.npz").with_value(critic_layers(Path(trainer)))
    policy.save(dest / "policy.npz")
    print(f"{dest}: value network of {len(policy.value_layers)} layers attached")


if __name__ == "__main__":
    main(*sys.argv[1:4])
