"""``allfives train --algo rllib_ppo`` (the algorithm table's row of the RLlib backend; the old
``--backend rllib`` names it too) and ``python -m allfives_train.rllib``: multi-agent PPO on
Ray RLlib from a YAML config of its own, every field overridable.

    allfives train --algo rllib_ppo                                 # configs/train/rllib.yaml
    allfives train --config configs/train/rllib_table.yaml --policy selfplay  # algo: rllib_ppo
    allfives train --algo rllib_ppo --address auto --num-env-runners 16  # a running Ray cluster
    allfives train --algo rllib_ppo --run-dir runs/x --resume       # continue after a stop

The game is given with the flags every command shares (``--preset``, ``--players``,
``--teams/--no-teams``, ``--rules FILE``, ``--set OPTION=VALUE``); fields shared with the SB3
trainer (``--net-arch``, ``--seed`` ...) use the same flags; RLlib's own fields are added by
:func:`add_rllib_arguments`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from allfives_agents.trained.rllib_agent import need_ray
from allfives_env.game.gameconfig import add_game_arguments
from allfives_env.inputs.safeyaml import missing_or_not_a_file
from allfives_env.inputs.trust import add_trust_argument, trusting
from allfives_train.configio import (
    GAME_FIELDS,
    add_field_flag,
    field_docs,
    parse_opponents,
)
from allfives_train.rllib.config import DEFAULT_CONFIG, FIELDS, RLlibConfig, load_config

_PREFIX = "cfg_"


_FIELD_DOCS = field_docs(RLlibConfig)


def add_rllib_arguments(parser: argparse.ArgumentParser,
                        taken: frozenset[str] | set[str] = frozenset()) -> None:
    """``--address`` and a flag for every RLlib config field not in ``taken`` (fields whose
    flags the parser already has, with dest ``cfg_<name>``)."""
    note = ("Flags shared with the other algos (above) keep their names; with algo rllib_ppo "
            "snapshot_every and checkpoint_every count training iterations.") if taken else None
    group = parser.add_argument_group("algo rllib_ppo (Ray RLlib) options", description=note)
    group.add_argument("--address", default=None, metavar="ADDRESS",
                       help="join this Ray cluster ('auto': the one started on this machine "
                            "with `ray start`); default: start a local Ray instance")
    for name, f in FIELDS.items():
        if name in taken or name in GAME_FIELDS or name == "address":
            continue
        add_field_flag(group, RLlibConfig, f, _FIELD_DOCS.get(name, ""), _PREFIX + name,
                       {"opponents": "AGENT@WEIGHT"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The standalone parser (``python -m allfives_train.rllib``)."""
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG,
                        help=f"YAML config (default: {DEFAULT_CONFIG.name} in configs/train/)")
    parser.add_argument("--quiet", action="store_true", help="no per-iteration lines")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in run_dir from its newest checkpoint (its "
                             "config.yaml, then these overrides)")
    add_game_arguments(parser.add_argument_group("the game (the same flags as every command)"))
    add_rllib_arguments(parser)


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    """Config overrides from the field flags (the game flags: ``game_changes``); the other
    algos' fields are refused."""
    out: dict[str, Any] = {}
    for key, value in vars(args).items():
        if not key.startswith(_PREFIX):
            continue
        name = key[len(_PREFIX):]
        if name not in FIELDS:
            raise ValueError(f"--{name.replace('_', '-')} is an option of the other algos; "
                             f"algo rllib_ppo takes {', '.join(FIELDS)}")
        if name == "opponents" and isinstance(value, list) and \
                all(isinstance(v, str) for v in value):
            value = parse_opponents(value)
        out[name] = value
    if getattr(args, "address", None) is not None:
        out["address"] = args.address
    return out


def load_from_args(args: argparse.Namespace) -> RLlibConfig:
    """The config the command line gives (``--config``, else configs/train/rllib.yaml; with
    ``--resume`` the run's own config.yaml, then the flags); ValueError (one line) when Ray
    is not installed. The algorithm table's ``config`` of rllib_ppo names this module: its
    ``load_from_args``, ``load_config`` and ``DEFAULT_CONFIG``."""
    from allfives_train.config import DEFAULT_CONFIG as SB3_DEFAULT

    # `allfives train --algo rllib_ppo` without --config: argparse left the main job's default
    config = DEFAULT_CONFIG if args.config == SB3_DEFAULT else Path(args.config)
    problem = missing_or_not_a_file(config)
    if problem:
        raise ValueError(f"--config {config}: {problem}")
    overrides = overrides_from(args)
    cfg = load_config(config, overrides, args)
    if getattr(args, "resume", False):  # the run's own config, then the command line's
        run_dir = cfg.resolved_run_dir()
        saved = run_dir / "config.yaml"
        if saved.is_file():  # a copied or moved run continues where it is, not where it was
            cfg = load_config(saved, {**overrides, "run_dir": str(run_dir)}, args)
    need_ray("algo rllib_ppo")
    return cfg


def run(args: argparse.Namespace) -> int:
    """``python -m allfives_train.rllib``: train, and on a stop say how to continue."""
    cfg = load_from_args(args)
    from allfives_train import algos
    from allfives_train.rllib.run import Interrupted

    try:  # the table's trainer of rllib_ppo (train/rllib/run.py), through the run shell
        algos.trainer(cfg.algo)(cfg, quiet=args.quiet,
                                resume=bool(getattr(args, "resume", False)))
    except Interrupted as stop:
        print(interrupted_message(stop, cfg.address), file=sys.stderr)
        return 128 + stop.signum
    return 0


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
    parser = argparse.ArgumentParser(prog="python -m allfives_train.rllib", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    add_trust_argument(parser)
    args = parser.parse_args(argv)
    try:
        with trusting(args.trust_checkpoint):
            return run(args)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
