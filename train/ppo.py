"""MaskablePPO self-play for All Fives, top to bottom (in the spirit of CleanRL's ``ppo.py``).

1. build the rules and the vectorized single-agent envs (:mod:`train.single_agent`);
2. build MaskablePPO and warm-start it by imitating a teacher bot (:mod:`train.imitation`),
   or load it from the run's latest checkpoint (``resume``);
3. learn, with callbacks that keep the ``self`` opponents on the current weights, freeze
   snapshots into the pool, evaluate against fixed bots, write checkpoints, and show progress;
4. write the final checkpoint, its evaluation table and the learning-curve PNG.

Run layout (``run_dir``): ``config.yaml``, ``checkpoints/step_<n>/`` (the last 3 kept),
``latest.txt`` (the newest checkpoint's name), ``best/`` (best win rate against
``best_metric``), ``final/``, ``snapshots/``, ``bc_data.npz`` (the teacher's decisions),
``eval.jsonl``, ``learning_curve.png``, ``tb/``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import yaml

from allfives_env.rules import Rules
from train.callbacks import EvalCheckpointCallback, ProgressCallback, SelfPlayCallback
from train.config import TrainConfig
from train.single_agent import AllFivesSingleAgentEnv


def make_rules_for(cfg: TrainConfig) -> Rules:
    return cfg.game().rules


def make_vec_env(cfg: TrainConfig, rules: Rules, seed: int) -> Any:
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    def make(i: int):  # noqa: ANN202
        def thunk() -> AllFivesSingleAgentEnv:
            return AllFivesSingleAgentEnv(rules, cfg.opponents, cfg.partner, cfg.margin_reward,
                                          cfg.win_reward, cfg.snapshot_keep, seed=seed + i)
        return thunk

    fns = [make(i) for i in range(cfg.n_envs)]
    vec = SubprocVecEnv(fns) if cfg.vec_env == "subproc" else DummyVecEnv(fns)
    return VecMonitor(vec)


def build_model(cfg: TrainConfig, env: Any, tb_dir: Path) -> Any:
    import torch
    from sb3_contrib import MaskablePPO

    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[cfg.activation]
    arch = list(cfg.net_arch)
    return MaskablePPO(
        "MlpPolicy", env, learning_rate=cfg.learning_rate, n_steps=cfg.n_steps,
        batch_size=cfg.batch_size, n_epochs=cfg.n_epochs, gamma=cfg.gamma,
        gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range, ent_coef=cfg.ent_coef,
        vf_coef=cfg.vf_coef, max_grad_norm=cfg.max_grad_norm, seed=cfg.seed, device="cpu",
        tensorboard_log=str(tb_dir), verbose=0,
        policy_kwargs={"net_arch": {"pi": arch, "vf": arch}, "activation_fn": activation},
    )


def latest_checkpoint(run_dir: Path) -> Path | None:
    marker = run_dir / "latest.txt"
    if not marker.is_file():
        return None
    path = run_dir / "checkpoints" / marker.read_text().strip()
    return path if (path / "model.zip").is_file() else None


def train(cfg: TrainConfig, resume: bool = False, quiet: bool = False) -> Path:
    """Train as ``cfg`` says; returns the final checkpoint directory."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(cfg.torch_threads)
    rules = make_rules_for(cfg)
    run_dir = cfg.resolved_run_dir()
    if not resume and ((run_dir / "latest.txt").exists() or (run_dir / "eval.jsonl").exists()):
        raise ValueError(f"run_dir {run_dir} already holds a run: continue it with --resume, "
                         "or give a new --run-dir")
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))

    # ---- 1. envs (each env seeded apart; a resumed run continues on fresh seeds) ----------
    previous = latest_checkpoint(run_dir) if resume else None
    if resume and previous is None:
        raise ValueError(f"--resume: no checkpoint to resume in {run_dir} (no latest.txt "
                         "naming a checkpoint with model.zip)")
    card = json.loads((previous / "card.json").read_text()) if previous else None
    steps_done = card["steps"] if card else 0
    env = make_vec_env(cfg, rules, cfg.seed * 10_000 + steps_done)

    # ---- 2. the model ----------------------------------------------------------------------
    if previous is not None:
        model = MaskablePPO.load(previous / "model.zip", env=env, device="cpu",
                                 tensorboard_log=str(run_dir / "tb"))
        history, wall0 = card["eval_history"], card["wall_time_s"]
        warm = card.get("warm_start")
    else:
        model = build_model(cfg, env, run_dir / "tb")
        if cfg.init_from:
            _init_weights(model, cfg.init_from)
        start, warm = time.perf_counter(), None
        if cfg.bc_teacher or cfg.bc_data:
            warm = _warm_start(cfg, rules, model, quiet)
        history, wall0 = [], time.perf_counter() - start

    # ---- 3. learn ----------------------------------------------------------------------------
    selfplay = SelfPlayCallback(cfg, run_dir)
    evaluator = EvalCheckpointCallback(cfg, rules, run_dir, history, wall0, warm, quiet)
    callbacks: list[Any] = [selfplay, evaluator]
    if cfg.progress and not quiet:
        callbacks.append(ProgressCallback(cfg.total_steps, steps_done))
    remaining = max(0, cfg.total_steps - model.num_timesteps)
    start = time.perf_counter()
    model.learn(remaining, callback=callbacks, reset_num_timesteps=previous is None,
                tb_log_name="ppo")
    evaluator.finish(model, time.perf_counter() - start)
    env.close()
    return run_dir / "final"


def _warm_start(cfg: TrainConfig, rules: Rules, model: Any, quiet: bool) -> dict[str, Any]:
    from train.imitation import load_or_collect, pretrain

    start = time.perf_counter()
    cache = cfg.resolved_run_dir() / "bc_data.npz"
    data = load_or_collect(cfg, rules, cfg.seed + 777, cache)
    stats = pretrain(model, data, cfg.bc_epochs, 256, cfg.bc_lr, cfg.vf_coef, cfg.seed)
    warm = {"teacher": cfg.bc_teacher or f"the decisions in {cfg.bc_data}",
            "decisions": stats["samples"], "accuracy": round(stats["accuracy"], 4),
            "value_rmse": round(stats["value_rmse"], 4),
            "seconds": round(time.perf_counter() - start, 1)}
    if not quiet:
        print(f"warm start: imitated {warm['teacher']} on {warm['decisions']:,} decisions in "
              f"{warm['seconds']:.0f} s; held-out accuracy {warm['accuracy']:.3f}, value RMSE "
              f"{warm['value_rmse']:.3f}")
    return warm


def _init_weights(model: Any, ref: str) -> None:
    """Copy a checkpoint's SB3 weights (model.zip) into a fresh model."""
    from sb3_contrib import MaskablePPO

    from agents.checkpoint import resolve_checkpoint

    src = resolve_checkpoint(ref) / "model.zip"
    if not src.is_file():
        raise ValueError(f"init_from {ref!r}: the checkpoint has no model.zip to start from")
    other = MaskablePPO.load(src, device="cpu")
    try:
        model.policy.load_state_dict(other.policy.state_dict())
    except RuntimeError as exc:
        raise ValueError(f"init_from {ref!r}: network shapes differ ({exc})") from None
