"""The evaluation and the report of ``allfives bench --train``
(:mod:`allfives_train.benchmarks.speedrun`).

Every saved policy plays the same ``games`` duplicate games (deal ``d``: seed
``game_seed(seed, d)``, every seating) against one reference agent, the learner as entry 0;
the deals of all policies are spread over ``workers`` processes (fork, as ``allfives eval``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from allfives_agents.base import Agent
from allfives_agents.evaluation.evaluate import build_agent, map_tasks, play_deal
from allfives_agents.evaluation.report import Outcome, pairing_summary
from allfives_agents.trained.checkpoint import PolicyAgent
from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.match import game_seed, seatings
from allfives_env.game.rules import Rules

Task = tuple[Rules, str, str, int, int]  # rules, policy file, reference id, deal, seed
_CACHE: dict[tuple[str, int], Agent] = {}


def _agent(key: str, seat: int, policy_file: bool) -> Agent:
    agent = _CACHE.get((key, seat))
    if agent is None:
        if policy_file:
            agent = PolicyAgent(NumpyPolicy.load(Path(key)))
            agent.name = "learner"
        else:
            agent = build_agent(key, seat)
        _CACHE[(key, seat)] = agent
    return agent


def run_task(task: Task) -> list[Outcome]:
    """One deal of one policy against the reference, from every seating."""
    rules, policy, against, deal, seed = task

    def agent_for(entry: int, seat: int) -> Agent:
        return _agent(policy, seat, True) if entry == 0 else _agent(against, seat, False)

    return play_deal(rules, agent_for, (0, 1), deal, game_seed(seed, deal))


def evaluate_points(rules: Rules, folder: Path, points: list[dict[str, Any]], against: str,
                    games: int, seed: int, workers: int) -> list[dict[str, Any]]:
    """``points`` with ``games``, ``win_rate``, ``ci95`` and ``mean_margin`` added."""
    deals = max(1, math.ceil(games / len(seatings(rules))))
    tasks: list[Task] = [(rules, str(folder / p["policy"]), against, d, seed)
                         for p in points for d in range(deals)]
    results = list(map_tasks(run_task, tasks, workers, one_thread_here=False))
    out = []
    for i, p in enumerate(points):
        outs = [o for r in results[i * deals:(i + 1) * deals] for o in r]
        s = pairing_summary(["learner", against], (0, 1), outs)
        margin = sum(o.points[0] - o.points[1] for o in outs) / len(outs)
        out.append({**p, "games": s["games"], "win_rate": s["win_rate"],
                    "ci95": list(s["ci95"]), "mean_margin": round(margin, 2)})
    return out


def format_report(result: dict[str, Any]) -> str:
    """The table of points and the minutes to each threshold, under the machine's line."""
    from allfives_env.benchmarks.machine import format_machine

    lines = [f"allfives bench --train {result['config']}: strength per minute against "
             f"{result['against']}, {result['games_per_point']} games per point on fixed "
             f"duplicate deals (seed {result['eval_seed']}), {result['date']}",
             format_machine(result["machine"]),
             f"{'minutes':>8} {'stage':<14}{'steps':>12}  {'win rate':>8}  95% interval"]
    for p in result["points"]:
        lo, hi = p["ci95"]
        lines.append(f"{p['train_s'] / 60:>8.2f} {p['stage'] or '-':<14}"
                     f"{p['steps_in_stage']:>12,}  {p['win_rate']:>8.3f}  [{lo:.3f}, {hi:.3f}]")
    lines.append(f"training: {result['train_s'] / 60:.2f} min (evaluation not counted)")
    lines.append("minutes to first reach (point estimate at or above the threshold):")
    for t, m in result["minutes_to"].items():
        shown = "not reached" if m is None else f"{m:.2f} min"
        lines.append(f"  {float(t):.0%} against {result['against']}: {shown}")
    return "\n".join(lines)
