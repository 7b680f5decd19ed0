"""``allfives bench``: engine and environment speed under random legal play.

Rows, each run for ``--seconds`` on one core in this process, one after another:

* ``engine``: the bare :class:`GameState` decision loop (decisions per second);
* ``raw_env()`` and ``env()``: ``allfives_v1`` through the standard AEC loop
  ``for agent in env.agent_iter(): obs, ... = env.last(); env.step(a)`` (steps per second,
  every agent step counted, the dead steps at the end of a game included);
* ``connect_four_v3 env()``: PettingZoo's classic env through the same loop, for scale;
* ``batched B=64/1024/4096``: B games at once through the batched engine, observation and
  mask included (:mod:`allfives_env.benchmarks.bench_batched`; needs numba).

Rates are per second of this process's CPU time (``time.process_time``), which is what one
core does even when other processes share the machine; wall-clock rates are shown beside
them, and the ratios use the CPU rates. The rows take turns over ``--rounds``
rounds and each keeps its best round. The policy is the same everywhere: uniform over the
legal actions (from the action mask, or the engine's legal list), drawn from one seeded
``numpy.random.Generator``.
Targets: ``env()`` at least 3x ``connect_four_v3``'s ``env()``; the engine at least 200,000
decisions per second. A benchmark, not a test: it reports, it does not fail. The report (and
``--json``) names the machine: CPU model, native bf16, torch's CPU capability where torch is
installed, numba's target (:mod:`allfives_env.benchmarks.machine`).

``--train CONFIG_OR_RECIPE`` measures strength per minute instead: it trains, then reports the
training minutes to set win rates against ``heuristic`` (docs/benchmarks.md). Training is a
floor above this one: the command line hands ``--train`` to the trainers (``HANDOFFS`` in the
top package's ``cli``); this module only declares the flag.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from allfives_env.benchmarks.machine import describe, format_machine
from allfives_env.game.engine import GameState
from allfives_env.game.rules import make_rules
from allfives_env.game.seeding import seed_arg

C4 = "connect_four_v3 env()"


def _uniforms(rng: np.random.Generator) -> list[float]:
    """A block of U[0, 1) draws; ``legal[int(u * len(legal))]`` is a uniform pick."""
    return rng.random(4096).tolist()


def play_random(g: GameState, rng: np.random.Generator, draws: list[float]) -> int:
    """Play ``g`` to its end, each decision uniform over the legal actions (``draws``: a pool
    of U[0, 1) draws, refilled from ``rng`` when empty); returns the decisions made."""
    decisions = 0
    while not g.game_over:
        if g.hand_over:
            g.next_hand()
            continue
        legal = g.legal_actions()
        if not draws:
            draws.extend(_uniforms(rng))
        g.apply(legal[int(draws.pop() * len(legal))])
        decisions += 1
    return decisions


def bench_engine(seconds: float, players: int, seed: int) -> dict[str, Any]:
    rules = make_rules(players=players)
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    decisions = games = 0
    clock, cpu = time.perf_counter, time.process_time
    start, cpu_start = clock(), cpu()
    while clock() - start < seconds:
        decisions += play_random(GameState(rules, rng, log=False), rng, draws)
        games += 1
    return _row("engine", "decisions/s", decisions, games, clock() - start, cpu() - cpu_start)


def bench_aec(name: str, make: Callable[[], Any], seconds: float, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    env = make()
    steps = games = 0
    clock, cpu = time.perf_counter, time.process_time
    start, cpu_start = clock(), cpu()
    while clock() - start < seconds:
        env.reset(seed=seed + games)
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                if not draws:
                    draws = _uniforms(rng)
                action = int(legal[int(draws.pop() * len(legal))])
            env.step(action)
            steps += 1
        games += 1
    row = _row(name, "steps/s", steps, games, clock() - start, cpu() - cpu_start)
    env.close()
    return row


def _row(name: str, unit: str, steps: int, games: int, wall: float, cpu: float) -> dict:
    """``rate``: per second of this process's CPU time (what one core does, whatever else
    the machine runs); ``wall_rate``: per wall-clock second."""
    return {"name": name, "unit": unit, "steps": steps, "games": games, "wall_seconds": wall,
            "cpu_seconds": cpu, "rate": steps / cpu, "wall_rate": steps / wall}


def _best_of_rounds(specs: list[tuple[str, Callable[[float, int], dict]]], seconds: float,
                    rounds: int, seed: int) -> list[dict[str, Any]]:
    """Run the rows in turn, ``rounds`` times, ``seconds / rounds`` each; per row keep the
    best round's rates (as ``timeit`` does: other load only ever slows a round down) and the
    totals of steps and games."""
    best: dict[str, dict[str, Any]] = {}
    for r in range(rounds):
        for name, fn in specs:
            row = fn(seconds / rounds, seed + 1000 * r)
            old = best.get(name)
            if old is None:
                best[name] = row
                continue
            steps, games = old["steps"] + row["steps"], old["games"] + row["games"]
            if row["rate"] > old["rate"]:
                best[name] = row
            best[name].update(steps=steps, games=games)
    return [best[name] for name, _ in specs]


def _connect_four() -> Callable[[], Any] | None:
    """PettingZoo's ``connect_four_v3`` ``env()`` maker, or None where it cannot be built
    (it needs pygame: the ``bench`` extra)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import pettingzoo

        def make() -> Any:
            return pettingzoo.make("aec", "classic/connect_four_v3")

        try:
            make().close()
        except Exception:  # pettingzoo's FailedToImport, ImportError: pygame missing
            return None
    return make


def run_all(seconds: float, players: int, seed: int, rounds: int = 5) -> dict[str, Any]:
    from allfives_env.benchmarks import bench_batched
    from allfives_env.env import env, raw_env

    specs: list[tuple[str, Callable[[float, int], dict]]] = [
        ("engine", lambda t, s: bench_engine(t, players, s)),
        ("raw_env()", lambda t, s: bench_aec("raw_env()", lambda: raw_env(players=players), t, s)),
        ("env()", lambda t, s: bench_aec("env()", lambda: env(players=players), t, s)),
    ]
    c4 = _connect_four()
    if c4 is not None:
        specs.append((C4, lambda t, s: bench_aec(C4, c4, t, s)))
    specs += bench_batched.specs(players)
    rows = _best_of_rounds(specs, seconds, rounds, seed)
    by = {r["name"]: r["rate"] for r in rows}
    ratios = {"env / raw_env": by["env()"] / by["raw_env()"]}
    if c4 is not None:
        ratios["env / connect_four_v3 env"] = by["env()"] / by[C4]
        ratios["raw_env / connect_four_v3 env"] = by["raw_env()"] / by[C4]
    bench_batched.add_ratios(by, ratios)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"players": players, "seed": seed, "seconds_per_row": seconds, "rounds": rounds,
            "cpus": os.cpu_count(), "load_average_1min": load, "machine": describe(),
            "rows": rows, "ratios": ratios,
            "connect_four_available": c4 is not None,
            "batched_available": bench_batched.available()}


def format_report(result: dict[str, Any]) -> str:
    load = result["load_average_1min"]
    lines = [f"allfives bench: players={result['players']}, seed={result['seed']}, "
             f"{result['seconds_per_row']:g} s per row in {result['rounds']} rounds (best round "
             f"kept), one process; {result['cpus']} CPUs, load average "
             f"{'?' if load is None else f'{load:.1f}'}",
             format_machine(result["machine"]),
             f"{'row':<24}{'rate (CPU)':>12}  {'unit':<12}{'rate (wall)':>12}{'steps':>10}"
             f"{'games':>8}"]
    for r in result["rows"]:
        lines.append(f"{r['name']:<24}{r['rate']:>12,.0f}  {r['unit']:<12}"
                     f"{r['wall_rate']:>12,.0f}{r['steps']:>10,}{r['games']:>8,}")
    lines.append("")
    for k, v in result["ratios"].items():
        lines.append(f"{k:<32}{v:>8.2f}x")
    if not result["connect_four_available"]:
        lines.append("connect_four_v3 could not be built (it needs pygame: pip install "
                     "'allfives[bench]'); its row and ratios are left out")
    if not result.get("batched_available", True):
        lines.append("the batched rows need numba: pip install 'allfives[fast]'")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="seconds per row, all rounds together (default 5)")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4),
                        help="seats at the table (default 2)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds the rows take turns over; best round kept (default 5)")
    parser.add_argument("--seed", type=seed_arg, default=0, help="random seed (default 0)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="also write the results as JSON to PATH")
    group = parser.add_argument_group(
        "strength per minute (--train): train, then evaluate the policies saved on the way")
    group.add_argument("--train", type=Path, default=None, metavar="CONFIG_OR_RECIPE",
                       help="train this config or recipe and report the training minutes to "
                            "set win rates against --against (docs/benchmarks.md)")
    group.add_argument("--minutes", type=float, default=None, metavar="M",
                       help="stop training after M minutes of training (default: the "
                            "config's total_steps)")
    group.add_argument("--every", type=float, default=30.0, metavar="S",
                       help="save the learner's policy every S seconds of training (default 30)")
    group.add_argument("--games", type=int, default=400, metavar="N",
                       help="evaluation games per saved policy (default 400)")
    group.add_argument("--against", default="heuristic", metavar="AGENT",
                       help="the agent every saved policy plays (default heuristic)")
    group.add_argument("--run-dir", default=None, metavar="DIR",
                       help="a new or empty folder for the run (default runs/bench_<name>)")
    group.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                       help="evaluation processes (default: every CPU)")


#: The module of ``--train`` (a layer above this one: loaded by name, as the CLI's commands).
def run(args: argparse.Namespace) -> int:
    from allfives_env.inputs.durations import check_duration
    from allfives_env.inputs.paths import atomic_write, check_output_path

    if getattr(args, "train", None) is not None:
        raise ValueError("--train trains a model: run it as `allfives bench --train ...`")
    if args.json is not None:
        check_output_path(args.json, "--json")
    check_duration(args.seconds, "--seconds")
    if args.rounds < 1:
        raise ValueError(f"--rounds must be at least 1, got {args.rounds}")
    result = run_all(args.seconds, args.players, args.seed, args.rounds)
    print(format_report(result))
    if args.json is not None:
        with atomic_write(args.json) as f:
            f.write(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0
