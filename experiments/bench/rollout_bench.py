"""The fast path's rollouts on 1, 2, ... local workers: for each count, seconds per rollout,
steps per second of the whole loop (rollouts and updates, as ``allfives train`` runs them), the
speed-up over the first count, and whether every count trained the same network (every weight
compared after the last update)::

    python -m experiments.bench.rollout_bench --workers 1 2
    python -m experiments.bench.rollout_bench --workers 1 2 4 --config configs/train/fast_2p.yaml
    python -m experiments.bench.rollout_bench --workers 1 --shards 1     # the rollout as one shard

``--config`` is a ppo_batched or dmc config (default ``configs/train/dmc_2p.yaml``, the dmc
stage of the recipes); its ``n_envs``, ``n_steps``, ``rollout_shards`` and updates are used as
they are, without evaluations or checkpoints.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import torch

from allfives_agents.evaluation.threads import limit_blas_threads
from allfives_train import algos
from allfives_train.algorithms.ppo_batched.net import features_of, make_net
from allfives_train.config import load_config
from allfives_train.games.rollouts import Rollouts

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "train" / "dmc_2p.yaml"


class Timed:
    """``envs`` whose ``collect`` calls are timed (``seconds``: their sum)."""

    def __init__(self, envs: Rollouts) -> None:
        self.envs, self.seconds = envs, 0.0

    def collect(self, *args: Any) -> Any:
        t = time.perf_counter()
        out = self.envs.collect(*args)
        self.seconds += time.perf_counter() - t
        return out


def timed(config: Path, workers: int, updates: int, shards: int | None = None
          ) -> tuple[float, float, int, dict[str, Any]]:
    """One warm-up rollout and update, then ``updates`` more with ``workers`` workers (and
    ``shards`` shards; default the config's): (seconds in rollouts, seconds in all, steps,
    the network's weights at the end)."""
    torch.set_num_threads(1)
    limit_blas_threads(1)
    fields: dict[str, Any] = {"rollout_workers": workers}
    if shards is not None:
        fields["rollout_shards"] = shards
    cfg = load_config(config, fields)
    torch.manual_seed(cfg.seed)
    agent = make_net(cfg)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.learning_rate, eps=1e-5)
    device = torch.device("cpu")
    learn = algos.learn(cfg.algo)  # the algo's round: one rollout, one update
    envs = Rollouts(cfg, agent, features_of(agent), device)
    timed_envs = Timed(envs)
    try:
        envs.reset(seed=cfg.seed)
        start = 0.0
        for i in range(updates + 1):
            if i == 1:
                timed_envs.seconds, start = 0.0, time.perf_counter()
            envs.set_self(agent.numpy_policy().arrays())
            learn(agent, optimizer, timed_envs, cfg, device)
        total = time.perf_counter() - start
    finally:
        envs.close()
    rollout_s = timed_envs.seconds
    weights = {k: v.detach().clone() for k, v in agent.state_dict().items()}
    return rollout_s, total, updates * cfg.n_envs * cfg.n_steps, weights


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bench.rollout_bench",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--updates", type=int, default=8, help="timed rollouts and updates")
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--shards", type=int, default=None,
                        help="rollout_shards (default: the config's)")
    args = parser.parse_args(argv)
    if min(args.workers) < 1 or args.updates < 1 or (args.shards or 1) < 1:
        print("error: --workers, --updates and --shards must be integers >= 1",
              file=sys.stderr)
        return 2
    try:
        measure(args)
    except (OSError, ValueError) as exc:
        print(f"error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
              file=sys.stderr)
        return 2
    return 0


def measure(args: argparse.Namespace) -> None:
    """Train with each worker count in turn and print a line for each."""
    first: tuple[float, dict[str, Any]] | None = None
    for w in args.workers:
        rollout_s, total, steps, weights = timed(args.config, w, args.updates, args.shards)
        if first is None:
            first = (total, weights)
        same = all(torch.equal(weights[k], first[1][k]) for k in weights)
        print(f"{w} worker(s): {steps:,} steps, rollouts {rollout_s / args.updates:.3f} s "
              f"each, {steps / total:,.0f} steps/s in all (rollouts and updates), speed-up "
              f"{first[0] / total:.2f}x, same network as {args.workers[0]} worker(s): {same}",
              flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
