"""Training speed: learner steps per second, by opponent kind.

    python -m allfives_train.benchmarks.bench                       # greedy, heuristic, ckpt and
    selfplay
    python -m allfives_train.benchmarks.bench --opponents selfplay greedy --json bench.json
    python -m allfives_train.benchmarks.bench --opponents heuristic ckpt:all_fives_2p --steps 40000

For each opponent it reports (1) the env alone: single-agent env steps per second with the
learner playing a uniformly random legal move, (2) training: MaskablePPO ``learn()`` steps
per second with the default config's envs and network (rollout collection and gradient
updates, no evaluation or checkpoints), and (3) the fast path (``algo: ppo_batched``,
``--fast-config``, train/algorithms/ppo_batched/trainer.py) over its VectorEnv, timed the same way
in the same
process, with its ratio to (2). ``ckpt`` is a network as the opponent (``--ckpt``; by default
the shipped model for the config's rules, ``all_fives_2p`` for 2 seats), ``selfplay`` the pool
{the current policy, that network}: self-play with network opponents. It also times one
opponent decision through SB3's ``predict()`` against the same network as a numpy forward
pass. It prints the machine (CPU model, native bf16, torch's CPU capability, numba's target:
:mod:`allfives_env.benchmarks.machine`), the fast path's precision and why (``precision: auto``,
train/algorithms/ppo_batched/precision.py), and the load average at the start and the end;
``--json`` holds them all.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from allfives_agents.base import make_agent
from allfives_env.benchmarks.machine import describe, format_machine
from allfives_train.algorithms.maskable_ppo.sb3_export import from_sb3
from allfives_train.algorithms.maskable_ppo.trainer import build_model, make_vec_env
from allfives_train.algorithms.ppo_batched.net import resolve_device
from allfives_train.algorithms.ppo_batched.precision import choose_precision
from allfives_train.config import (
    ACTOR,
    DEFAULT_CONFIG,
    MASKABLE_CONFIG,
    load_config,
    make_rules_for,
)
from allfives_train.games.single_agent import AllFivesSingleAgentEnv

FAST_CONFIG = DEFAULT_CONFIG.parent / "fast_2p.yaml"


def net_opponent(rules: Any, ref: str | None = None) -> str:
    """The network opponent of the ``ckpt`` and ``selfplay`` rows: ``ckpt:<ref>`` (a checkpoint
    directory or a shipped model's name), by default the shipped model for ``rules``."""
    if ref is None:
        from allfives_agents.trained.models import best_for

        ref = best_for(rules).name
    return f"ckpt:{ref}"


def pool(opponent: str, shipped: str) -> list[dict[str, Any]]:
    """The opponent entries of a row: one agent id, or ``selfplay`` (self and a network)."""
    if opponent == "selfplay":
        return [{"agent": "self", "weight": 1.0}, {"agent": shipped, "weight": 1.0}]
    return [{"agent": opponent, "weight": 1.0}]


def env_rate(rules: Any, opponents: list[dict[str, Any]], steps: int, seed: int = 0
             ) -> tuple[float, float]:
    """Env steps per wall-clock second and per CPU second of this process."""
    env = AllFivesSingleAgentEnv(rules, opponents, seed=seed)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        legal = np.flatnonzero(env.action_masks())
        _, _, term, trunc, _ = env.step(int(legal[rng.integers(len(legal))]))
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - start), steps / (time.process_time() - cpu)


def train_rate(cfg: Any, opponents: list[dict[str, Any]], steps: int) -> tuple[float, float]:
    """PPO ``learn()`` steps per wall-clock second and per CPU second (dummy envs: one
    process does everything)."""
    cfg = cfg.replace(opponents=opponents)
    env = make_vec_env(cfg, make_rules_for(cfg), cfg.seed)
    with tempfile.TemporaryDirectory() as tmp:
        model = build_model(cfg, env, Path(tmp))
        model.tensorboard_log = None
        env.env_method("set_self", from_sb3(model.policy).arrays())  # self: a network
        rollout = cfg.n_envs * cfg.n_steps
        model.learn(rollout)  # warm-up: first rollout and update
        start, cpu, before = time.perf_counter(), time.process_time(), model.num_timesteps
        model.learn(steps, reset_num_timesteps=False)
        done = model.num_timesteps - before
        rates = done / (time.perf_counter() - start), done / (time.process_time() - cpu)
    env.close()
    return rates


def predict_vs_numpy(cfg: Any, repeats: int = 2000) -> tuple[float, float]:
    """Microseconds per single decision: SB3 ``predict()`` vs the numpy forward pass."""
    env = AllFivesSingleAgentEnv(make_rules_for(cfg), seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        model = build_model(cfg, env, Path(tmp))
    obs, _ = env.reset(seed=0)
    mask = env.action_masks()
    policy = from_sb3(model.policy)
    start = time.perf_counter()
    for _ in range(repeats):
        model.predict(obs, action_masks=mask, deterministic=True)
    sb3 = (time.perf_counter() - start) / repeats * 1e6
    start = time.perf_counter()
    for _ in range(repeats):
        policy.act(obs, mask)
    return sb3, (time.perf_counter() - start) / repeats * 1e6


def fast_rate(cfg: Any, opponents: list[dict[str, Any]], steps: int) -> tuple[float, float]:
    """The fast path's learner steps per wall-clock second and per CPU second."""
    from allfives_train.algorithms.ppo_batched.trainer import timed_learn

    done, wall, cpu = timed_learn(cfg.replace(opponents=opponents), steps)
    return done / wall, done / cpu


def _engine_name(cfg: Any) -> str:
    if cfg.engine == "scalar":
        return "scalar"
    try:
        import allfives_train.games.vector_env  # noqa: F401
    except ImportError:
        return "scalar (batched not installed)"
    return "batched"


def main(argv: list[str] | None = None) -> int:
    import torch

    from allfives_agents.evaluation.threads import limit_blas_threads

    torch.set_num_threads(1)
    limit_blas_threads(1)  # both trainers alike: one numpy BLAS thread
    parser = argparse.ArgumentParser(prog="python -m allfives_train.benchmarks.bench",
                                     description=__doc__)
    parser.add_argument("--config", type=Path, default=MASKABLE_CONFIG)
    parser.add_argument("--opponents", nargs="+",
                        default=["greedy", "heuristic", "ckpt", "selfplay"],
                        help="agent ids; 'ckpt' means the --ckpt network as the opponent, "
                             "'selfplay' the pool {self, that network}")
    parser.add_argument("--ckpt", default=None, metavar="REF",
                        help="the network opponent of the ckpt and selfplay rows: a checkpoint "
                             "directory or a shipped model's name (default: the shipped model "
                             "for the config's rules, as ckpt:best picks it)")
    parser.add_argument("--fast-config", type=Path, default=FAST_CONFIG,
                        help="the fast path's config (default: configs/train/fast_2p.yaml)")
    parser.add_argument("--fast-steps", type=int, default=200_000,
                        help="fast-path training steps timed")
    parser.add_argument("--steps", type=int, default=20_000, help="training steps timed")
    parser.add_argument("--env-steps", type=int, default=20_000, help="env-only steps timed")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    if args.json:
        from allfives_env.inputs.paths import check_output_path

        try:
            check_output_path(args.json, "--json")
        except ValueError as exc:
            parser.error(str(exc))
    cfg = load_config(args.config, {"progress": False})
    rules = make_rules_for(cfg)
    results: dict[str, Any] = {}
    try:
        shipped = net_opponent(rules, args.ckpt)
        make_agent(shipped)  # a bad --ckpt: one line before any timing
    except ValueError as exc:
        print(f"python -m allfives_train.benchmarks.bench: error: --ckpt: {exc}", file=sys.stderr)
        return 2
    results["machine"] = describe()
    print(format_machine(results["machine"]))
    results["load_average_1min"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    sb3_us, np_us = predict_vs_numpy(cfg)
    print(f"one decision, network {cfg.net_arch}: SB3 predict() {sb3_us:.0f} us, "
          f"numpy forward {np_us:.1f} us")
    results.update({"config": str(args.config), "net_arch": cfg.net_arch,
                    "n_envs": cfg.n_envs, "predict_us": sb3_us, "numpy_us": np_us,
                    "opponents": {}})
    fast = load_config(args.fast_config, {"progress": False})
    precision = choose_precision(fast.precision, resolve_device(fast.device),
                                 fast.section(ACTOR).policy)
    results["fast"] = {"config": str(args.fast_config), "n_envs": fast.n_envs,
                       "n_steps": fast.n_steps, "engine": _engine_name(fast),
                       "precision": precision.precision, "precision_reason": precision.reason}
    results["network_opponent"] = shipped
    print(f"network opponent (ckpt, selfplay): {shipped}")
    print(f"fast path: {args.fast_config.name}, {results['fast']['engine']} engine, "
          f"{fast.n_envs} envs x {fast.n_steps} steps, net {fast.net_arch}, {precision.line()}")
    if precision.warning:
        print(precision.warning)
    print(f"{'opponent':<36} {'env steps/s':>12} {'per CPU s':>10} {'train steps/s':>14} "
          f"{'per CPU s':>10} {'fast steps/s':>13} {'per CPU s':>10} {'fast/train':>10} "
          f"{'per CPU s':>10}")
    for opponent in args.opponents:
        agent = shipped if opponent == "ckpt" else opponent
        entries = pool(agent, shipped)
        label = f"ckpt:{Path(shipped[5:]).name}" if opponent == "ckpt" else opponent
        e, e_cpu = env_rate(rules, entries, args.env_steps)
        t, t_cpu = train_rate(cfg, entries, args.steps)
        f, f_cpu = fast_rate(fast, entries, args.fast_steps)
        results["opponents"][label] = {"env_steps_per_s": e, "env_steps_per_cpu_s": e_cpu,
                                       "train_steps_per_s": t, "train_steps_per_cpu_s": t_cpu,
                                       "fast_steps_per_s": f, "fast_steps_per_cpu_s": f_cpu,
                                       "fast_over_train": f / t,
                                       "fast_over_train_per_cpu_s": f_cpu / t_cpu}
        print(f"{label:<36} {e:>12,.0f} {e_cpu:>10,.0f} {t:>14,.0f} {t_cpu:>10,.0f} "
              f"{f:>13,.0f} {f_cpu:>10,.0f} {f / t:>9.1f}x {f_cpu / t_cpu:>9.1f}x")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    results["load_average_1min_end"] = load
    print(f"load average (1 min) at the start {_load(results['load_average_1min'])}, "
          f"at the end {_load(load)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


def _load(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f}"


if __name__ == "__main__":
    raise SystemExit(main())
