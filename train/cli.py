"""``allfives train``: MaskablePPO self-play from a YAML config, every field overridable.

    allfives train                                    # configs/train/default.yaml
    allfives train --config configs/train/ppo_all_fives_2p.yaml --total-steps 2000000
    allfives train --opponents greedy@1 heuristic@1 snapshots@2 --set gamma=0.99
    allfives train --config ... --resume              # continue from the latest checkpoint
    allfives train --backend rllib --iterations 50    # Ray RLlib multi-agent PPO (train/rllib)
    allfives train --config configs/train/fast_2p.yaml  # algo ppo_batched: the fast path
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from train.config import DEFAULT_CONFIG, FIELDS, TrainConfig, field_help, load_config
from train.configio import add_field_flag

_PREFIX = "cfg_"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG,
                        help=f"YAML training config (default: {DEFAULT_CONFIG.name} in "
                             "configs/train/)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in run_dir from its latest checkpoint "
                             "(its config.yaml, then these overrides)")
    parser.add_argument("--set", dest="set_items", action="append", default=[],
                        metavar="FIELD=VALUE", help="override any config field (YAML value)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or eval lines")
    parser.add_argument("--backend", choices=("sb3", "rllib"), default="sb3",
                        help="sb3: MaskablePPO against an opponent pool (default); rllib: "
                             "multi-agent PPO on Ray RLlib (the rllib extra; its own fields "
                             "below, default config configs/train/rllib.yaml)")
    group = parser.add_argument_group("config fields (defaults: the config file, else the "
                                      "dataclass defaults shown)")
    for name, f in FIELDS.items():
        _add_field(group, name, f)
    from train.rllib.cli import add_rllib_arguments

    add_rllib_arguments(parser, taken=set(FIELDS))


def _add_field(group: Any, name: str, f: Any) -> None:
    add_field_flag(group, TrainConfig, f, field_help(name), _PREFIX + name,
                   {"opponents": "AGENT@WEIGHT", "rules": "OPTION=VALUE"})


def parse_opponents(items: list[str]) -> list[dict[str, Any]]:
    """``["greedy@1", "ckpt:x@2", "snapshots"]`` -> pool entries (weight 1 when omitted)."""
    out = []
    for item in items:
        agent, sep, weight = item.rpartition("@")
        if not sep:
            agent, weight = item, "1"
        try:
            value = float(weight)
        except ValueError:
            raise ValueError(f"--opponents {item!r}: the weight after @ must be a number "
                             "(e.g. greedy@2)") from None
        out.append({"agent": agent, "weight": value})
    return out


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    from allfives_env.rules import parse_overrides

    out: dict[str, Any] = {}
    for item in args.set_items:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"--set {item!r}: must look like FIELD=VALUE")
        out[key.strip().replace("-", "_")] = yaml.safe_load(raw)
    for key, value in vars(args).items():
        if key.startswith(_PREFIX):
            name = key[len(_PREFIX):]
            if name == "opponents":
                value = parse_opponents(value)
            elif name == "rules":
                value = parse_overrides(value)
            out[name] = value
    return out


def run(args: argparse.Namespace) -> int:
    if args.backend == "rllib":
        from train.rllib.cli import run as run_rllib

        return run_rllib(args)
    overrides = overrides_from(args)
    if not Path(args.config).is_file():
        raise ValueError(f"--config {args.config}: no such file")
    cfg = load_config(args.config, overrides)
    if args.resume:  # the run's own config, then the command line's overrides
        saved = cfg.resolved_run_dir() / "config.yaml"
        if saved.is_file():
            cfg = load_config(saved, overrides)
    if cfg.algo == "ppo_batched":
        from train.fastppo import train
    else:
        from train.ppo import train

    train(cfg, resume=args.resume, quiet=args.quiet)
    return 0
