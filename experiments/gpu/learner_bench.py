"""The fast path's learner on each device (issue 52): steps/s of the whole loop
(``allfives_train.algorithms.ppo_batched.trainer.timed_learn``: rollouts, ``self`` refreshes and PPO
updates) and
of the PPO update alone on one collected rollout, at the precision ``precision: auto``
picks on that device::

    python experiments/gpu/learner_bench.py --devices cpu cuda
    python experiments/gpu/learner_bench.py --config configs/train/selfplay_2p.yaml --steps 32768

A device torch does not see is reported and skipped.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from allfives_agents.evaluation.threads import limit_blas_threads
from allfives_train.algorithms.ppo_batched.net import features_of, make_net, resolve_device
from allfives_train.algorithms.ppo_batched.precision import choose_precision
from allfives_train.algorithms.ppo_batched.trainer import gae, timed_learn, update
from allfives_train.config import load_config
from allfives_train.games.rollouts import Rollouts

FAST = Path(__file__).resolve().parents[2] / "configs" / "train" / "fast_2p.yaml"


def update_only(config: Path, device_name: str, repeats: int) -> tuple[int, float, str]:
    """(steps per update, seconds per update, precision) of PPO updates on one rollout."""
    cfg = load_config(config, {"device": device_name, "progress": False})
    torch.set_num_threads(cfg.torch_threads)  # as allfives train runs the learner
    limit_blas_threads(1)
    device = resolve_device(cfg.device)
    precision = choose_precision(cfg.precision, device, cfg.value("policy")).precision
    torch.manual_seed(cfg.seed)
    agent = make_net(cfg, precision).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.learning_rate, eps=1e-5)
    envs = Rollouts(cfg, agent, features_of(agent), device)
    try:
        envs.reset(seed=cfg.seed)
        batch, obs = envs.collect(agent, cfg.n_steps, None, device)
    finally:
        envs.close()
    advantages, returns = gae(batch, agent, obs, cfg.gamma, cfg.value("gae_lambda"), device)
    update(agent, optimizer, batch, advantages, returns, cfg)  # warm-up
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        update(agent, optimizer, batch, advantages, returns, cfg)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return cfg.n_envs * cfg.n_steps, (time.perf_counter() - start) / repeats, precision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", nargs="+", default=["cpu", "cuda"])
    parser.add_argument("--config", type=Path, default=FAST)
    parser.add_argument("--steps", type=int, default=65_536, help="loop steps timed")
    parser.add_argument("--repeats", type=int, default=3, help="updates timed")
    args = parser.parse_args()
    for name in args.devices:
        if name == "cuda" and not torch.cuda.is_available():
            print("cuda: torch sees no CUDA device here; skipped", flush=True)
            continue
        rollout, seconds, precision = update_only(args.config, name, args.repeats)
        print(f"{name}: PPO update alone ({args.config.name}, {rollout:,} steps, {precision}): "
              f"{seconds:.3f} s, {rollout / seconds:,.0f} steps/s", flush=True)
        cfg = load_config(args.config, {"device": name, "progress": False})
        steps, wall, cpu = timed_learn(cfg, args.steps)
        print(f"{name}: whole loop (rollouts and updates): {steps:,} steps in {wall:.2f} s, "
              f"{steps / wall:,.0f} steps/s ({cpu:.1f} s CPU in this process)", flush=True)


if __name__ == "__main__":
    main()
