"""Learner steps per second of :class:`allfives_train.games.vector_env.AllFivesVectorEnv` by
opponent.

``python -m experiments.bench.vector_bench [--num-envs 1024] [--seconds 3]``: the learner plays
uniform
random legal actions (no network: the env's own cost), the opponents are ``greedy``,
``heuristic``, ``self`` (a 256x256 tanh numpy policy, sampling) and ``random``. Rates are per
second of this process's CPU time, with the scalar single-agent env (greedy opponents) in the
same run for the ratio. ``--action-views``: the AEC env (random moves) and the VectorEnv (greedy
opponents) with
each ``action_view`` (``raw``, ``facts``, ``heuristic``), and the ratio to ``raw``. Set
``OPENBLAS_NUM_THREADS=1`` on a shared machine: numpy's threaded
matrix products otherwise spin against other processes.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.games.single_agent import AllFivesSingleAgentEnv
from allfives_train.games.vector_env import AllFivesVectorEnv


def random_policy_arrays(seed: int = 1, hidden: int = 256) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = [OBS_SIZE, hidden, hidden, N_ACTIONS]
    layers = [((rng.normal(size=(a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
              for a, b in zip(sizes, sizes[1:])]
    return NumpyPolicy(layers, "tanh").arrays()


def bench_vector(opponent: str, num_envs: int, seconds: float, seed: int = 0,
                 action_view: str = "raw") -> float:
    env = AllFivesVectorEnv(make_rules(), num_envs=num_envs, seed=seed,
                            opponents=[{"agent": opponent, "weight": 1.0}],
                            action_view=action_view)
    env.set_self(random_policy_arrays())
    rng = np.random.default_rng(seed)
    _, infos = env.reset(seed=seed)
    steps, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        mask = infos["action_mask"]
        _, _, _, _, infos = env.step((rng.random(mask.shape) * mask).argmax(axis=1))
        steps += num_envs
    return steps / (time.process_time() - start)


def bench_scalar(seconds: float, seed: int = 0) -> float:
    env = AllFivesSingleAgentEnv(make_rules(), [{"agent": "greedy", "weight": 1.0}], seed=seed)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        legal = np.flatnonzero(env.action_masks())
        _, _, term, trunc, _ = env.step(int(legal[rng.integers(len(legal))]))
        steps += 1
        if term or trunc:
            env.reset()
    return steps / (time.process_time() - start)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--action-views", action="store_true",
                   help="instead: greedy opponents, each action_view (raw, facts, heuristic)")
    args = p.parse_args(argv)
    if args.action_views:
        return bench_views(args.num_envs, args.seconds)
    scalar = bench_scalar(args.seconds)
    print(f"{'single-agent env, greedy (scalar)':<40}{scalar:>12,.0f} learner steps/s")
    for opponent in ("greedy", "heuristic", "self", "random"):
        rate = bench_vector(opponent, args.num_envs, args.seconds)
        print(f"{f'VectorEnv N={args.num_envs}, {opponent}':<40}{rate:>12,.0f} learner steps/s"
              f"  ({rate / scalar:.1f}x scalar greedy)")
    return 0


def bench_aec(seconds: float, action_view: str, seed: int = 0) -> float:
    """AEC env steps/s (``allfives_env.env()``, 2 seats), random legal moves, observing the
    seat to act every step."""
    import allfives_env

    env = allfives_env.env(players=2, action_view=action_view)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
        steps += 1
    return steps / (time.process_time() - start)


def bench_views(num_envs: int, seconds: float) -> int:
    """Steps/s with each action view: the AEC env, then the VectorEnv (greedy opponents); raw
    first for the ratio."""
    raw = 0.0
    for view in ("raw", "facts", "heuristic"):
        rate = bench_aec(seconds, view)
        raw = raw or rate
        print(f"{f'AEC env(), 2 seats, action_view={view}':<50}{rate:>12,.0f} "
              f"steps/s  ({rate / raw:.2f}x raw)")
    raw = 0.0
    for view in ("raw", "facts", "heuristic"):
        rate = bench_vector("greedy", num_envs, seconds, action_view=view)
        raw = raw or rate
        print(f"{f'VectorEnv N={num_envs}, greedy, action_view={view}':<50}{rate:>12,.0f} "
              f"learner steps/s  ({rate / raw:.2f}x raw)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
