"""``allfives train --algo rllib_ppo`` (the algorithm table's row of the RLlib backend; the old
``--backend rllib`` names it too) and ``python -m allfives_train.rllib``: multi-agent PPO on
Ray RLlib from a ``TrainConfig`` like every other algo, its own fields in the ``rllib``
section (train/rllib/section.py), every field overridable.

    allfives train --algo rllib_ppo                                 # configs/train/rllib.yaml
    allfives train --config configs/train/rllib_table.yaml --rllib-policy selfplay
    allfives train --algo rllib_ppo --address auto --num-env-runners 16  # a running Ray cluster
    allfives train --algo rllib_ppo --run-dir runs/x --resume       # continue after a stop

The flags are ``allfives train``'s (train/cli.py): the game flags every command shares, the
shared fields (``--net-arch``, ``--seed`` ...), and the section's (``--iterations``,
``--rllib-policy`` ...). This module holds what is the backend's own on the command line:
the message after a stop, and the ``python -m`` entry point.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any


def interrupted_message(stop: Any, address: str | None = None) -> str:
    """What Ctrl-C or SIGTERM saved (a :class:`allfives_train.rllib.run.Interrupted`), how to
    play it and the exact command that continues the run."""
    again = (f"allfives train --algo rllib_ppo --run-dir {shlex.quote(str(stop.run_dir))}"
             + (f" --address {shlex.quote(address)}" if address else "") + " --resume")
    if stop.checkpoint is None:
        return (f"allfives train: interrupted before the first checkpoint; nothing was saved "
                f"yet. Start it again (from the beginning) with: {again}")
    play = f"rllib:{stop.run_dir}" if stop.checkpoint.name == "final" or \
        _iteration(stop.run_dir / "final") == stop.saved_at else f"rllib:{stop.checkpoint}"
    if stop.at_once:
        return (f"allfives train: stopped at once at iteration {stop.iteration}; the newest "
                f"checkpoint is {stop.checkpoint} (iteration {stop.saved_at}, plays as "
                f"{play}). Continue with: {again}")
    return (f"allfives train: interrupted at iteration {stop.iteration}; checkpoint saved to "
            f"{stop.checkpoint} (plays as {play}). Continue with: {again}")


def _iteration(checkpoint: Path) -> int | None:
    """The iteration a checkpoint's card names (None: no readable card)."""
    from allfives_agents.trained.rllib_agent import CARD_NAME

    try:
        return int(json.loads((checkpoint / CARD_NAME).read_text())["iteration"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv: list[str] | None = None) -> int:
    """``python -m allfives_train.rllib ARGS``: ``allfives train --algo rllib_ppo ARGS``."""
    from allfives.cli import main as allfives

    return allfives(["train", "--algo", "rllib_ppo",
                     *(sys.argv[1:] if argv is None else argv)])
