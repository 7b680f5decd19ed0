"""``allfives train``: self-play training from a YAML config, every field overridable; the
config's ``algo`` picks the trainer through the algorithm table (train/algos.py).

    allfives train                                    # configs/train/default.yaml
    allfives train --config configs/train/residual_2p.yaml --total-steps 2000000
    allfives train --opponents greedy@1 heuristic@1 snapshots@2 --gamma 0.99
    allfives train --preset five_up --set target=100  # the game flags of every command
    allfives train --config ... --resume              # continue from the latest checkpoint
    allfives train --init-from runs/x/final --trust-checkpoint  # its model.zip can run code
    allfives train --algo rllib_ppo --iterations 50   # Ray RLlib multi-agent PPO (train/rllib)
    allfives train --config configs/train/fast_2p.yaml  # algo ppo_batched: the fast path

Every run goes through the run shell (train/shell/run.py): the start line below, the run
folder, the stops and the exit status (130 after Ctrl-C, 143 after SIGTERM) are the same
for every algo.

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
from typing import Any

from allfives_env.game.gameconfig import add_game_arguments
from allfives_env.inputs.safeyaml import missing_or_not_a_file
from allfives_train.config import (
    DEFAULT_CONFIG,
    TrainConfig,
    field_help,
    flat_fields,
    ignored_note,
    load_config,
)
from allfives_train.configio import GAME_FIELDS, add_field_flag, parse_opponents
from allfives_train.shell.run import start_line  # the run shell's first line
from allfives_train.shell.rundir import TrainingInterrupted  # (no torch: a plain module)

_PREFIX = "cfg_"


#: The field flags ``--help`` shows; every other field has a flag too (``--help-config``).
SHOWN_FIELDS = ("algo", "total_steps", "seed", "run_dir", "init_from", "opponents", "device",
                "address", "iterations")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG,
                        help=f"YAML training config, or a recipe of stages (default: "
                             f"{DEFAULT_CONFIG.name} in configs/train/: the main job)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in run_dir from its latest checkpoint "
                             "(its config.yaml, then these overrides)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or eval lines")
    parser.add_argument("--backend", choices=("sb3", "rllib"), default="sb3",
                        help="the old switch: rllib is now --algo rllib_ppo (PPO on Ray "
                             "RLlib, configs/train/rllib.yaml; rllib_table.yaml: the "
                             "multi-agent table env); sb3: the config's algo (default)")
    parser.add_argument("--help-config", action="store_true",
                        help="list every config field with its meaning and the value the "
                             "config (--config, --algo) gives it, then exit")
    add_game_arguments(parser.add_argument_group(
        "the game (the same flags as every command; defaults: the config file's)"))
    group = parser.add_argument_group(
        "config fields", description="Every field of the config has a flag of its flat name "
        "(--gamma 0.99; a section's field: --eval-games 400 for evaluation.games); defaults "
        "are the config file's. The main ones are below; --help-config lists them all.")
    for name, spot in flat_fields().items():
        if name not in GAME_FIELDS and name != "address":
            add_field_flag(group, spot.owner, spot.field, field_help(name), _PREFIX + name,
                           {"opponents": "AGENT@WEIGHT"}, name)
    group.add_argument("--address", dest=_PREFIX + "address", default=argparse.SUPPRESS,
                       metavar="ADDRESS")  # its text as given ('' is refused, not null)
    shown = {_PREFIX + n for n in SHOWN_FIELDS}
    for action in parser._actions:  # the rest stay usable, out of the short help
        if action.dest.startswith(_PREFIX) and action.dest not in shown:
            action.help = argparse.SUPPRESS
        elif action.dest in shown:
            action.help = field_help(action.dest[len(_PREFIX):]).replace("%", "%%")


def help_config(args: argparse.Namespace, algo: str | None = None) -> int:
    """``--help-config``: every field, its meaning and its value under ``--config`` (with
    ``--algo``: that algo's)."""
    from allfives_train import recipe

    path = config_path(args, algo)
    if recipe.is_recipe(path):
        raise ValueError(f"--help-config: {path} is a recipe; its stages are configs: run "
                         "--help-config with the --config a stage extends")
    named = getattr(args, _PREFIX + "algo", None)
    cfg = load_config(path, {"algo": named} if named else _algo_override(args, algo))
    print(f"allfives train: the fields of {path} (each is a flag: --field-name VALUE)")
    for name, spot in flat_fields().items():
        if spot.section is None:
            _print_field(name, cfg.value(name), field_help(name))
    from allfives_train import algos

    for section in algos.get(cfg.algo).sections:  # the sections its algo reads
        print(f"\n== section {section.key}: {section.summary} (in YAML under {section.key}:)")
        for f in section.fields():
            flat = section.flat(f)
            _print_field(f"{section.dotted(f)} (--{flat.replace('_', '-')})", cfg.value(flat),
                         field_help(flat))
    return 0


def _print_field(name: str, value: Any, doc: str) -> None:
    import textwrap

    print(f"\n{name}: {value!r}")
    print(textwrap.fill(doc, 96, initial_indent="    ", subsequent_indent="    "))


def chosen_algo(args: argparse.Namespace) -> str | None:
    """The algo the command line names before any config is loaded: ``--algo``, the old
    ``--backend rllib`` (with a one-line note naming the new form), the ``algo`` of
    ``--config``'s file, or (``--resume`` with ``--run-dir``) of the run's config.yaml;
    None: the config loader's default."""
    named = getattr(args, _PREFIX + "algo", None)
    if named is not None:
        return str(named)
    if args.backend == "rllib":
        print("allfives train: note: --backend rllib is now --algo rllib_ppo (or algo: "
              "rllib_ppo in the config)", file=sys.stderr, flush=True)
        return "rllib_ppo"
    run_dir = getattr(args, _PREFIX + "run_dir", None)
    if args.resume and run_dir is not None:
        found = _algo_in(Path(run_dir) / "config.yaml")
        if found is not None:
            return found
    return _algo_in(Path(args.config))


def _algo_in(path: Path, guess: bool = True) -> str | None:
    """The ``algo`` a YAML config file names (with ``guess``, an RLlib run's config.yaml
    written before its config had one: rllib_ppo), None where it names none or does not
    read."""
    from allfives_env.inputs.safeyaml import load_yaml_file

    try:
        data = load_yaml_file(path, "config")
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("algo"), str):
        return str(data["algo"])
    old = "iterations" in data and "total_steps" not in data
    return "rllib_ppo" if old and guess else None


def config_path(args: argparse.Namespace, algo: str | None) -> Path:
    """``--config``; without it, the shipped config of ``algo``'s row
    (:attr:`~allfives_train.algos.Algo.default_config`: ``--algo rllib_ppo`` runs
    configs/train/rllib.yaml), else the main job's."""
    from allfives_train import algos

    row = algos.ALGOS.get(algo or "")
    if Path(args.config) == DEFAULT_CONFIG and row is not None and row.default_config:
        return DEFAULT_CONFIG.parent / row.default_config
    return Path(args.config)


def _algo_override(args: argparse.Namespace, algo: str | None) -> dict[str, Any]:
    """``{algo: ...}`` where the command line names the algo other than by ``--algo`` or the
    file's own ``algo``: the old ``--backend rllib``, or an RLlib run's config.yaml from before
    its config had an ``algo``; else {}."""
    if getattr(args, _PREFIX + "algo", None) is not None or algo is None:
        return {}  # --algo is among the overrides already
    path = Path(args.config)
    if args.backend == "rllib":
        return {"algo": algo}
    guessed = _algo_in(path)
    return {"algo": guessed} if guessed and _algo_in(path, False) is None else {}


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    """Config overrides from the field flags (the game flags: :func:`game_changes`)."""
    out: dict[str, Any] = {}
    for key, value in vars(args).items():
        if key.startswith(_PREFIX):
            name = key[len(_PREFIX):]
            out[name] = parse_opponents(value) if name == "opponents" else value
    return out


def run(args: argparse.Namespace) -> int:
    algo = chosen_algo(args)
    if args.help_config:
        return help_config(args, algo)
    loaded = _load_train_config(args, algo)
    if isinstance(loaded, int):  # a recipe: its stages ran
        return loaded
    cfg = loaded
    if not args.quiet:  # before torch and the trainers are imported (seconds)
        print(start_line(cfg, args.resume), flush=True)
        note = ignored_note(cfg)  # fields the algo does not read
        if note:
            print(note, flush=True)
    from allfives_train import algos

    algos.preflight(cfg.algo)  # what its trainer needs installed (imports torch: seconds)
    from allfives_train.shell.rundir import force_bar

    # --progress: a bar even when stderr is no terminal
    force_bar(getattr(args, _PREFIX + "progress", None) is not None)

    train = algos.trainer(cfg.algo)  # the one algorithm table (train/algos.py)
    # At exit, skip the interpreter's last collection over every object torch and SB3 made:
    # it exits in 0.5 s instead of 3.7 s (measured), so the card's time matches the real one.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    try:  # the run shell (train/shell/run.py): the set-up, the stops, what they saved
        train(cfg, resume=args.resume, quiet=args.quiet,
              started=process_start(getattr(args, "started", None)))
    except TrainingInterrupted as stop:
        print(interrupted_message(stop, getattr(cfg, "address", None)), file=sys.stderr)
        return 128 + (stop.signum or signal.SIGINT)
    return 0


def _load_train_config(args: argparse.Namespace, algo: str | None) -> TrainConfig | int:
    """The ``TrainConfig`` of the command line (``--config``, else ``algo``'s shipped config:
    :func:`config_path`; with ``--resume``: the run's own config.yaml, then the flags); a
    recipe's stages are run here (their exit status returned)."""
    from allfives_train.shell.preflight import require_sb3

    overrides = overrides_from(args)
    path = config_path(args, algo)
    problem = missing_or_not_a_file(path)
    if problem:
        raise ValueError(f"--config {path}: {problem}")
    from allfives_train import recipe

    if recipe.is_recipe(path):  # stages, each from the one before (train/recipe.py)
        require_sb3()
        return int(recipe.run(args, overrides))
    cfg = load_config(path, {**_algo_override(args, algo), **overrides}, args)
    if args.resume:  # the run's own config, then the command line's overrides
        run_dir = cfg.resolved_run_dir()
        saved = run_dir / "config.yaml"
        if saved.is_file():  # a copied or moved run continues where it is, not where it was
            found = _algo_in(saved)  # (an old RLlib run's names none)
            again = {"algo": found} if found and "algo" not in overrides else {}
            cfg = load_config(saved, {**again, **overrides, "run_dir": str(run_dir)}, args)
    return cfg


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


def interrupted_message(stop: TrainingInterrupted, address: str | None = None) -> str:
    """What Ctrl-C or SIGTERM saved and the exact command that continues the run."""
    if stop.unit == "iterations":  # the RLlib backend's words (iterations, what plays)
        from allfives_train.rllib.run import interrupted_message as rllib_message

        return rllib_message(stop, address)
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
