"""algo maskable_ppo's own config section (``maskable_ppo:`` in a config): SB3's
vectorization and the imitation warm start (flags ``--vec-env``, ``--bc-*``), and its checks."""

from __future__ import annotations

import dataclasses
from typing import Any

from allfives_train.sections import Section, positive_ints, section_of


@dataclasses.dataclass
class MaskablePPOSection:
    """sb3-contrib's MaskablePPO: its envs and the warm start that imitates a teacher."""

    vec_env: str = "dummy"
    """``dummy`` (all envs in this process) or ``subproc`` (one process per env)."""
    bc_teacher: str | None = "heuristic"
    """Before PPO, imitate this agent (e.g. ``heuristic``); null: start from scratch."""
    bc_samples: int = 100_000
    """Teacher decisions collected for the warm start (whole games)."""
    bc_epochs: int = 10
    """Passes over the teacher's decisions (minibatches of 256)."""
    bc_lr: float = 1e-3
    """Adam step size of the warm start."""
    bc_workers: int = 2
    """Processes collecting the warm start's teacher decisions."""
    bc_data: str | None = None
    """Read the warm-start decisions from this .npz (a run's ``bc_data.npz``) instead of
    collecting them."""


MASKABLE_PPO = Section("maskable_ppo", MaskablePPOSection,
                       "SB3's envs and the imitation warm start")


def check(cfg: Any, bad: Any) -> None:
    """Its envs' vectorization and the warm start's counts."""
    own = section_of(cfg, MASKABLE_PPO)
    if own.vec_env not in ("dummy", "subproc"):
        raise bad("vec_env", "must be dummy or subproc")
    positive_ints(bad, {"bc_samples": own.bc_samples, "bc_epochs": own.bc_epochs,
                        "bc_workers": own.bc_workers})


def no_imitation(cfg: Any, bad: Any, algo: str, start: str) -> None:
    """maskable_ppo's warm start (``bc_teacher``, ``bc_data``) unset: ``algo`` starts from
    ``start``; a teacher set for it is refused, not ignored (it would change nothing)."""
    own = section_of(cfg, MASKABLE_PPO)
    for name in ("bc_teacher", "bc_data"):
        if getattr(own, name):
            raise bad(name, f"algo {algo} has no imitation warm start (it starts from "
                            f"{start}): set it to null (e.g. --bc-teacher null)")
