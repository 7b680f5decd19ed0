"""``allfives bench``: engine and environment speed under random legal play.

Rows, each run for ``--seconds`` on one core in this process, one after another:

* ``engine``: the bare :class:`GameState` decision loop (decisions per second);
* ``raw_env()`` and ``env()``: ``allfives_v0`` through the standard AEC loop
  ``for agent in env.agent_iter(): obs, ... = env.last(); env.step(a)`` (steps per second,
  every agent step counted, the dead steps at the end of a game included);
* ``connect_four_v3 env()``: PettingZoo's classic env through the same loop, for scale.

The policy is the same everywhere: uniform over the legal actions (from the action mask, or
the engine's legal list), drawn from one seeded ``numpy.random.Generator``.
Targets: ``env()`` at least 3x ``connect_four_v3``'s ``env()``; the engine at least 200,000
decisions per second. A benchmark, not a test: it reports, it does not fail.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from allfives_env.engine import GameState
from allfives_env.rules import make_rules

ENGINE_TARGET = 200_000
ENV_RATIO_TARGET = 3.0


def _uniforms(rng: np.random.Generator) -> list[float]:
    """A block of U[0, 1) draws; ``legal[int(u * len(legal))]`` is a uniform pick."""
    return rng.random(4096).tolist()


def bench_engine(seconds: float, players: int, seed: int) -> dict[str, Any]:
    rules = make_rules(players=players)
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    decisions = games = 0
    clock = time.perf_counter
    start = clock()
    while clock() - start < seconds:
        g = GameState(rules, rng, log=False)
        while not g.game_over:
            if g.hand_over:
                g.next_hand()
                continue
            legal = g.legal_actions()
            if not draws:
                draws = _uniforms(rng)
            g.apply(legal[int(draws.pop() * len(legal))])
            decisions += 1
        games += 1
    elapsed = clock() - start
    return {"name": "engine", "unit": "decisions/s", "steps": decisions, "games": games,
            "seconds": elapsed, "rate": decisions / elapsed}


def bench_aec(name: str, make: Callable[[], Any], seconds: float, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    env = make()
    steps = games = 0
    clock = time.perf_counter
    start = clock()
    while clock() - start < seconds:
        env.reset(seed=seed + games)
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                if not draws:
                    draws = _uniforms(rng)
                action = int(legal[int(draws.pop() * len(legal))])
            env.step(action)
            steps += 1
        games += 1
    elapsed = clock() - start
    env.close()
    return {"name": name, "unit": "steps/s", "steps": steps, "games": games,
            "seconds": elapsed, "rate": steps / elapsed}


def run_all(seconds: float, players: int, seed: int) -> dict[str, Any]:
    from allfives_env.env import env, raw_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import pettingzoo

        def connect_four() -> Any:
            return pettingzoo.make("aec", "classic/connect_four_v3")

    rows = [
        bench_engine(seconds, players, seed),
        bench_aec("raw_env()", lambda: raw_env(players=players), seconds, seed),
        bench_aec("env()", lambda: env(players=players), seconds, seed),
        bench_aec("connect_four_v3 env()", connect_four, seconds, seed),
    ]
    by = {r["name"]: r["rate"] for r in rows}
    ratios = {
        "env / connect_four_v3 env": by["env()"] / by["connect_four_v3 env()"],
        "raw_env / connect_four_v3 env": by["raw_env()"] / by["connect_four_v3 env()"],
        "env / raw_env": by["env()"] / by["raw_env()"],
        "engine / 200k target": by["engine"] / ENGINE_TARGET,
    }
    return {"players": players, "seed": seed, "seconds_per_row": seconds, "rows": rows,
            "ratios": ratios,
            "targets_met": {"env >= 3x connect_four_v3": ratios["env / connect_four_v3 env"]
                            >= ENV_RATIO_TARGET,
                            "engine >= 200k decisions/s": by["engine"] >= ENGINE_TARGET}}


def format_report(result: dict[str, Any]) -> str:
    lines = [f"allfives bench: players={result['players']}, seed={result['seed']}, "
             f"{result['seconds_per_row']:g} s per row, one process",
             f"{'row':<24}{'rate':>12}  {'unit':<12}{'steps':>10}{'games':>8}"]
    for r in result["rows"]:
        lines.append(f"{r['name']:<24}{r['rate']:>12,.0f}  {r['unit']:<12}"
                     f"{r['steps']:>10,}{r['games']:>8,}")
    lines.append("")
    for k, v in result["ratios"].items():
        lines.append(f"{k:<32}{v:>8.2f}x")
    for k, ok in result["targets_met"].items():
        lines.append(f"target {k}: {'met' if ok else 'MISSED'}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="seconds per row (default 5)")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4),
                        help="seats at the table (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="also write the results as JSON to PATH")


def run(args: argparse.Namespace) -> int:
    if not args.seconds > 0:
        raise ValueError(f"--seconds must be positive, got {args.seconds}")
    result = run_all(args.seconds, args.players, args.seed)
    print(format_report(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0
