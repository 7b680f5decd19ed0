"""Copy a fast-path checkpoint and give its policy.npz a critic, from a run's trainer.pt or
from another checkpoint that carries one (its policy.npz's value layers).

Checkpoints written before 2026-12-04 (commit adding NumpyPolicy.value) hold only the actor;
the run's trainer.pt (our own file, weights only) still has the critic, and a later run of the
same recipe carries one in its checkpoint.

    python experiments/value_search/attach_value.py CKPT_DIR RUN_DIR/trainer.pt OUT_DIR
    python experiments/value_search/attach_value.py CKPT_DIR CRITIC_CKPT_DIR OUT_DIR
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from allfives_agents.trained.policy_numpy import NumpyPolicy


def trainer_critic(trainer: Path) -> list[tuple]:
    import torch

    state = torch.load(trainer, map_location="cpu", weights_only=True)["agent"]
    names = sorted({k.rsplit(".", 1)[0] for k in state if k.startswith("critic.")},
                   key=lambda n: int(n.split(".")[1]))
    return [(state[f"{n}.weight"].float().numpy().T.copy(), state[f"{n}.bias"].float().numpy())
            for n in names]


def critic_layers(source: Path) -> list[tuple]:
    """The critic of ``source``: a trainer.pt, or a checkpoint folder whose policy carries one."""
    if source.is_dir():
        layers = NumpyPolicy.load(source / "policy.npz").value_layers
        if not layers:
            raise SystemExit(f"{source}/policy.npz carries no critic")
        return list(layers)
    return trainer_critic(source)


def main(final: str, source: str, out: str) -> None:
    dest = Path(out)
    shutil.copytree(final, dest)
    policy = NumpyPolicy.load(dest / "policy.npz").with_value(critic_layers(Path(source)))
    policy.save(dest / "policy.npz")
    print(f"{dest}: value network of {len(policy.value_layers)} layers attached")


if __name__ == "__main__":
    main(*sys.argv[1:4])
