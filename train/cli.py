"""``allfives train``: self-play training from a YAML config, every field overridable; the
config's ``algo`` picks the trainer through the algorithm table (train/algos.py).

    allfives train                                    # configs/train/default.yaml
    allfives train --config configs/train/residual_2p.yaml --total-steps 2000000
    allfives train --opponents greedy@1 heuristic@1 snapshots@2 --gamma 0.99
    allfives train --preset five_up --set target=100  # the game flags of every command
    allfives train --config ... --resume              # continue from the latest checkpoint
    allfives train --init-from runs/x/final --trust-checkpoint  # its model.zip can run code
    allfives train --backend rllib --iterations 50    # Ray RLlib multi-agent PPO (train/rllib)
    allfives train --config configs/train/fast_2p.yaml  # algo ppo_batched: the fast path

The game is given with the flags every command shares (``--preset``, ``--players``,
``--teams/--no-teams``, ``--rules FILE``, ``--set OPTION=VALUE`` for rule options:
:func:`allfives_env.game.gameconfig.add_game_arguments`); every other config field has a flag of
its own name (``--total-steps``, ``--gamma`` ...).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import shlex
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from allfives_env.game.gameconfig import add_game_arguments
from allfives_env.inputs.safeyaml import missing_or_not_a_file
from allfives_train.config import (
    DEFAULT_CONFIG,
    FIELDS,
    TrainConfig,
    field_help,
    ignored_note,
    load_config,
)
from allfives_train.configio import GAME_FIELDS, add_field_flag, parse_opponents

if TYPE_CHECKING:  # for the annotation only; run() imports it when a run starts
    from allfives_train.rundir import TrainingInterrupted

_PREFIX = "cfg_"


#: The field flags ``--help`` shows; every other field has a flag too (``--help-config``).
SHOWN_FIELDS = ("algo", "total_steps", "seed", "run_dir", "init_from", "opponents", "device")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG,
                        help=f"YAML training config, or a recipe of stages (default: "
                             f"{DEFAULT_CONFIG.name} in configs/train/: the main job)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in run_dir from its latest checkpoint "
                             "(its config.yaml, then these overrides)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or eval lines")
    parser.add_argument("--backend", choices=("sb3", "rllib"), default="sb3",
                        help="sb3: this project's trainers, the config's algo (default); "
                             "rllib: PPO on Ray RLlib (configs/train/rllib.yaml: the batched "
                             "engine; rllib_table.yaml: the multi-agent table env)")
    parser.add_argument("--help-config", action="store_true",
                        help="list every config field with its meaning and the value the "
                             "config (--config, --backend) gives it, then exit")
    add_game_arguments(parser.add_argument_group(
        "the game (the same flags as every command; defaults: the config file's)"))
    group = parser.add_argument_group(
        "config fields", description="Every field of the config has a flag of its own name "
        "(--gamma 0.99, --eval-games 400); defaults are the config file's. The main ones are "
        "below; --help-config lists them all.")
    for name, f in FIELDS.items():
        if name not in GAME_FIELDS and name != "address":  # --address: the Ray group's flag
            _add_field(group, name, f)
    from allfives_train.rllib.cli import add_rllib_arguments

    add_rllib_arguments(parser, taken=set(FIELDS))
    shown = {_PREFIX + n for n in SHOWN_FIELDS}
    for action in parser._actions:  # the rest stay usable, out of the short help
        if action.dest.startswith(_PREFIX) and action.dest not in shown:
            action.help = argparse.SUPPRESS
        elif action.dest in shown:
            action.help = field_help(action.dest[len(_PREFIX):]).replace("%", "%%")


def help_config(args: argparse.Namespace) -> int:
    """``--help-config``: every field, its meaning and its value under ``--config``."""
    import dataclasses
    import textwrap

    from allfives_train import recipe
    from allfives_train.configio import field_docs

    path = Path(args.config)
    if args.backend == "rllib":
        from allfives_train.rllib.config import DEFAULT_CONFIG as RLLIB_CONFIG
        from allfives_train.rllib.config import load_config as load_rllib

        path = RLLIB_CONFIG if path == DEFAULT_CONFIG else path
        cfg: Any = load_rllib(path)
    elif recipe.is_recipe(path):
        raise ValueError(f"--help-config: {path} is a recipe; its stages are configs: run "
                         "--help-config with the --config a stage extends")
    else:
        cfg = load_config(path)
    docs = field_docs(type(cfg))
    print(f"allfives train: the fields of {path} (each is a flag: --field-name VALUE)")
    for f in dataclasses.fields(cfg):
        print(f"\n{f.name}: {getattr(cfg, f.name)!r}")
        print(textwrap.fill(docs.get(f.name, ""), 96, initial_indent="    ",
                            subsequent_indent="    "))
    return 0


def _add_field(group: Any, name: str, f: Any) -> None:
    add_field_flag(group, TrainConfig, f, field_help(name), _PREFIX + name,
                   {"opponents": "AGENT@WEIGHT"})


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    """Config overrides from the field flags (the game flags: :func:`game_changes`)."""
    out: dict[str, Any] = {}
    for key, value in vars(args).items():
        if key.startswith(_PREFIX):
            name = key[len(_PREFIX):]
            out[name] = parse_opponents(value) if name == "opponents" else value
    if getattr(args, "address", None) is not None:  # search_distill labels on that cluster
        out["address"] = args.address
    return out


def run(args: argparse.Namespace) -> int:
    if args.help_config:
        return help_config(args)
    if args.backend == "rllib":
        from allfives_train.rllib.cli import run as run_rllib

        return run_rllib(args)
    from allfives_train.preflight import require_sb3

    overrides = overrides_from(args)
    problem = missing_or_not_a_file(args.config)
    if problem:
        raise ValueError(f"--config {args.config}: {problem}")
    from allfives_train import recipe

    if recipe.is_recipe(args.config):  # stages, each from the one before (train/recipe.py)
        require_sb3()
        return recipe.run(args, overrides)
    cfg = load_config(args.config, overrides, args)
    if args.resume:  # the run's own config, then the command line's overrides
        run_dir = cfg.resolved_run_dir()
        saved = run_dir / "config.yaml"
        if saved.is_file():  # a copied or moved run continues where it is, not where it was
            cfg = load_config(saved, {**overrides, "run_dir": str(run_dir)}, args)
    if not args.quiet:  # before torch and the trainers are imported (seconds)
        print(start_line(cfg, args.resume), flush=True)
        note = ignored_note(cfg)  # fields the algo does not read (train/algos.py)
        if note:
            print(note, flush=True)
    require_sb3()  # (imports torch: seconds)
    from allfives_train.rundir import TrainingInterrupted, force_bar

    force_bar("progress" in overrides)  # --progress: a bar even when stderr is no terminal

    from allfives_train import algos

    train = algos.trainer(cfg.algo)  # the one algorithm table (train/algos.py)
    # At exit, skip the interpreter's last collection over every object torch and SB3 made:
    # it exits in 0.5 s instead of 3.7 s (measured), so the card's time matches the real one.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    from allfives_train.rundir import sigterm_as_ctrl_c

    with sigterm_as_ctrl_c() as stopped_by:
        try:
            train(cfg, resume=args.resume, quiet=args.quiet,
                  started=process_start(getattr(args, "started", None)))
        except TrainingInterrupted as stop:
            print(interrupted_message(stop), file=sys.stderr)
            return 128 + signal.SIGTERM if stopped_by else 130
    return 0


def start_line(cfg: TrainConfig, resume: bool) -> str:
    """The command's first line: the game, the algo, the run dir and the steps it will train
    (``total_steps`` rounded up to whole rollouts, said when it is)."""
    rules = cfg.game().rules
    table = f"{rules.players} seats" + (", teams" if rules.teams else "")
    line = (f"allfives train: {'resuming ' if resume else ''}{rules.preset} {table}, algo "
            f"{cfg.algo}, run dir {cfg.resolved_run_dir()}")
    from allfives_train import algos

    if not algos.get(cfg.algo).rollouts:  # learner steps in whole rollouts of n_envs * n_steps
        return f"{line}, total_steps {cfg.total_steps:,}"
    rollout = cfg.n_envs * cfg.n_steps
    steps = -(-cfg.total_steps // rollout) * rollout
    if steps == cfg.total_steps:
        return f"{line}, {steps:,} steps"
    return (f"{line}, {steps:,} steps (total_steps {cfg.total_steps:,} rounded up to whole "
            f"rollouts of {rollout:,} steps: n_envs {cfg.n_envs} x n_steps {cfg.n_steps})")


def process_start(fallback: float | None) -> float | None:
    """This process's start as a ``time.perf_counter()`` value when the process is the
    ``allfives`` command (Linux: from ``/proc``, so the interpreter's start-up and imports
    count in the run's wall time); else ``fallback`` (``main()`` called in-process)."""
    import os
    import time

    if Path(sys.argv[0]).name not in ("allfives", "allfives.exe", "cli.py"):
        return fallback
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return fallback
    if not 0 <= age < 7 * 86400:
        return fallback
    return time.perf_counter() - age


def interrupted_message(stop: TrainingInterrupted) -> str:
    """What Ctrl-C saved and the exact command that continues the run."""
    run_dir, saved, steps = stop.run_dir, stop.checkpoint, stop.steps
    again = f"allfives train --run-dir {shlex.quote(str(run_dir))} --resume"
    if saved is None:
        first = "label shard" if stop.unit == "positions" else "checkpoint"
        return (f"allfives train: interrupted before the first {first}; nothing was saved "
                f"yet. Start it again (from the beginning) with: {again}")
    if stop.unit == "positions":
        return (f"allfives train: interrupted after {steps:,} positions labelled by this "
                f"command; every finished shard is kept in {saved}. Continue with: {again}")
    return (f"allfives train: interrupted at {steps:,} steps; checkpoint saved to {saved}. "
            f"Continue with: {again}")
