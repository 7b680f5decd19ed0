"""``allfives simulate``: play games between agents and write their records (JSON Lines).

Games are played by the one game loop, :func:`allfives_env.game.match.play_game`; game ``k`` of a
run with ``--seed S`` has the seed ``game_seed(S, k)``, stored in its record, so::

    state = play_game(make_rules("five_up"), [make_agent("random"), make_agent("greedy")],
                      record["seed"])

plays a recorded game again (see :mod:`allfives_env.game.match` for the seeding convention; it is
the one ``allfives eval`` uses, so both commands write the same record for the same seed,
agents and seating).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from allfives_agents.base import agent_ids_help, make_agent
from allfives_env.game.gameconfig import add_game_arguments, rules_from_args
from allfives_env.game.match import game_seed, play_game
from allfives_env.game.rules import Rules
from allfives_env.game.seeding import seed_arg
from allfives_env.inputs.paths import check_output_path
from allfives_env.records.record import game_record, write_records


# ---------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_arguments(parser)
    parser.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    parser.add_argument("--seed", type=seed_arg, default=0,
                        help="run seed; game k uses game_seed(seed, k) (default 0)")
    parser.add_argument("--agents", nargs="+", default=["random"], metavar="ID",
                        help="agent id per seat, or one id for every seat (default: random); "
                             + agent_ids_help())
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="write the records here, one JSON document per line")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--engine", choices=("scalar", "batched"), default="scalar",
                        help="scalar (default), or batched: the same games (agents random, "
                        "greedy, heuristic) through the batched engine; needs numba")


def run(args: argparse.Namespace) -> int:
    if args.out:
        check_output_path(args.out, "--out")
    rules = rules_from_args(args)
    if args.games < 1:
        raise ValueError(f"--games {args.games}: must be at least 1")
    ids = list(args.agents)
    if len(ids) == 1:
        ids = ids * rules.players
    if len(ids) != rules.players:
        raise ValueError(f"--agents gives {len(ids)} ids for {rules.players} seats: "
                         "give one id for every seat, or one for all")
    agents = [make_agent(agent_id, seed=seat) for seat, agent_id in enumerate(ids)]
    records, started = [], time.perf_counter()
    if args.engine == "batched":
        from allfives_agents.batched import simulate as simulate_batched

        seeds = [game_seed(args.seed, k) for k in range(args.games)]
        records = simulate_batched.play_records(rules, ids, seeds)
    for k in _progress(range(args.games if args.engine == "scalar" else 0),
                       not args.no_progress):
        seed = game_seed(args.seed, k)
        records.append(game_record(play_game(rules, agents, seed), seed=seed, agents=ids))
    elapsed = time.perf_counter() - started
    if args.out:
        write_records(args.out, records)
    print(summary(rules, ids, records, elapsed, args.out))
    return 0


def _progress(items: range, enabled: bool) -> Any:
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="games", unit="game", file=sys.stderr, leave=False)


def summary(rules: Rules, ids: Sequence[str], records: Sequence[dict], elapsed: float,
            out: str | None) -> str:
    """A short plain-text report of a simulation run."""
    n = len(records)
    wins = [0] * rules.n_sides
    for rec in records:
        if rec["winner"] is not None:
            wins[rec["winner"]] += 1
    unfinished = sum(rec["winner"] is None for rec in records)
    hands = sum(len(rec["hands"]) for rec in records)
    lines = [
        f"{n} games of {rules.preset}, {rules.players} players"
        f"{' in teams' if rules.teams else ''}, target {rules.target}; agents: {', '.join(ids)}",
    ]
    for side, w in enumerate(wins):
        lines.append(f"  {rules.side_name(side):<22} wins {w:>6}  ({100.0 * w / n:5.1f}%)")
    if unfinished:
        lines.append(f"  no winner (truncated)  {unfinished:>6}")
    lines.append(f"  mean hands per game {hands / n:.2f}; {n / max(elapsed, 1e-9):.1f} games/s")
    if out:
        lines.append(f"  records written to {out}")
    return "\n".join(lines)
