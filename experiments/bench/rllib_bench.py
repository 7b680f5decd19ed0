"""Env steps per second of one RLlib env runner, for RLlib configs side by side (the same
process, so the figures compare as ratios)::

    python -m experiments.bench.rllib_bench configs/train/rllib_table.yaml configs/train/rllib.yaml

Each config's algorithm is built with its env runner in this process (``num_env_runners``
0; ``num_envs_per_env_runner`` as the config says), warmed up with one sample, then timed
over ``--steps`` env steps sampled with exploration (the module's forward passes, the env,
RLlib's episode bookkeeping and connectors; no learning).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def steps_per_second(config: Path, steps: int) -> tuple[float, int]:
    """(env steps per second, games side by side) of one env runner of ``config``."""
    from allfives_train.config import load_config
    from allfives_train.rllib.section import RLLIB

    cfg = load_config(config, {"num_env_runners": 0, "rllib_bc_teacher": None})
    if cfg.section(RLLIB).engine == "batched":
        from allfives_train.rllib.batched import build_batched_config as build
        from allfives_train.rllib.batched import register_batched as register
    else:
        from allfives_train.rllib.algo import build_config as build
        from allfives_train.rllib.algo import register
    register()
    algo = build(cfg).build_algo()
    try:
        runner = algo.env_runner
        runner.sample(num_timesteps=min(steps, 2000), random_actions=False)
        start, done = time.perf_counter(), 0
        while done < steps:
            episodes = runner.sample(num_timesteps=steps - done, random_actions=False)
            done += sum(len(e) for e in episodes)
        return done / (time.perf_counter() - start), cfg.section(RLLIB).num_envs_per_env_runner
    finally:
        algo.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bench.rllib_bench",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("configs", type=Path, nargs="+")
    parser.add_argument("--steps", type=int, default=20_000, help="env steps timed per config")
    args = parser.parse_args(argv)
    if args.steps < 1:
        print("error: --steps must be an integer >= 1", file=sys.stderr)
        return 2
    import ray
    import torch

    from allfives_agents.evaluation.threads import limit_blas_threads

    torch.set_num_threads(1)
    limit_blas_threads(1)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        first = None
        for config in args.configs:
            rate, games = steps_per_second(config, args.steps)
            first = first or rate
            print(f"{config}: {rate:,.0f} env steps/s ({games} games per env runner), "
                  f"{rate / first:.1f}x the first", flush=True)
    except (OSError, ValueError) as exc:
        print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
