"""The training loop: start or join Ray, build PPO, train, log, checkpoint with a model card.

Run directory::

    run_dir/config.yaml                  the resolved config
    run_dir/progress.csv                 one row per iteration
    run_dir/checkpoint_000010/           algo.save_to_path() + allfives_rllib.json (the card)
    run_dir/final/                       the last iteration's checkpoint (the same layout)
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from pathlib import Path
from typing import Any

import yaml

from agents.rllib_agent import CARD_FORMAT, CARD_NAME
from allfives_env.observation import OBS_LAYOUT_ID, OBS_SIZE
from allfives_env.tiles import N_ACTIONS
from train.rllib.config import RLlibConfig
from train.rllib.mapping import seat_modules, trained_modules


def init_ray(cfg: RLlibConfig, address: str | None) -> None:
    """Join the cluster at ``address`` ("auto": the one started on this machine with
    ``ray start``), or start a small local instance (``num_cpus`` CPUs, no dashboard)."""
    import ray

    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=cfg.num_cpus, include_dashboard=False, log_to_driver=False)


def make_card(cfg: RLlibConfig, iteration: int, env_steps: int) -> dict[str, Any]:
    import ray

    rules = cfg.game().rules
    return {
        "format": CARD_FORMAT, "backend": "rllib", "ray_version": ray.__version__,
        "obs_layout": OBS_LAYOUT_ID, "obs_size": OBS_SIZE, "n_actions": N_ACTIONS,
        "players": rules.players, "teams": rules.teams, "preset": rules.preset,
        "rules": rules.to_dict(), "policy": cfg.policy,
        "seat_modules": seat_modules(cfg.policy, rules),
        "trained_modules": trained_modules(cfg.policy, rules),
        "iteration": iteration, "env_steps": env_steps, "config": cfg.to_dict(),
    }


def save(algo: Any, cfg: RLlibConfig, directory: Path, iteration: int, env_steps: int) -> Path:
    """``algo.save_to_path(directory)`` plus the card beside it."""
    if directory.exists():
        shutil.rmtree(directory)
    algo.save_to_path(str(directory.resolve()))
    card = make_card(cfg, iteration, env_steps)
    (directory / CARD_NAME).write_text(json.dumps(card, indent=2, default=str) + "\n")
    return directory


def summarize(result: dict[str, Any], modules: list[str]) -> dict[str, Any]:
    """The numbers of one iteration that go into progress.csv."""
    runners = result.get("env_runners", {})
    learners = result.get("learners", {})
    returns = runners.get("module_episode_returns_mean", {})
    row: dict[str, Any] = {
        "iteration": result.get("training_iteration"),
        "env_steps": result.get("num_env_steps_sampled_lifetime",
                                runners.get("num_env_steps_sampled_lifetime")),
        "episodes": runners.get("num_episodes"),
        "episode_len_mean": runners.get("episode_len_mean"),
    }
    for m in modules:
        row[f"{m}_return_mean"] = returns.get(m)
        row[f"{m}_entropy"] = learners.get(m, {}).get("entropy")
        row[f"{m}_vf_loss"] = learners.get(m, {}).get("vf_loss")
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}


def train(cfg: RLlibConfig, address: str | None = None, quiet: bool = False) -> Path:
    """Train for ``cfg.iterations``; return the final checkpoint directory."""
    import torch

    torch.set_num_threads(cfg.torch_threads)
    from train.rllib.algo import build_config, register

    run_dir = cfg.resolved_run_dir()
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    init_ray(cfg, address)
    register()
    algo = build_config(cfg).build_algo()
    modules = trained_modules(cfg.policy, cfg.game().rules)
    start, steps = time.time(), 0
    try:
        with open(run_dir / "progress.csv", "w", newline="") as fh:
            writer = None
            for it in range(1, cfg.iterations + 1):
                row = summarize(algo.train(), modules)
                row["seconds"] = round(time.time() - start, 2)
                steps = int(row["env_steps"] or 0)
                if writer is None:
                    writer = csv.DictWriter(fh, fieldnames=list(row))
                    writer.writeheader()
                writer.writerow(row)
                fh.flush()
                if not quiet:
                    print(_line(row, modules), flush=True)
                if it % cfg.checkpoint_every == 0:
                    save(algo, cfg, run_dir / f"checkpoint_{it:06d}", it, steps)
        final = save(algo, cfg, run_dir / "final", cfg.iterations, steps)
    finally:
        algo.stop()
    if not quiet:
        print(f"final checkpoint: {final} (play it as rllib:{final})")
    return final


def _line(row: dict[str, Any], modules: list[str]) -> str:
    def fmt(v: Any) -> str:
        return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    rets = " ".join(f"{m}={fmt(row.get(f'{m}_return_mean'))}" for m in modules)
    return (f"iter {row['iteration']} steps {row['env_steps']} episodes {row['episodes']} "
            f"len {fmt(row['episode_len_mean'])} return {rets} ({row['seconds']}s)")
