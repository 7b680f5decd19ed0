"""``allfives simulate``: play games between agents and write their records (JSON Lines).

:func:`play_game` is the one game loop that simulation, evaluation and terminal play share::

    state = play_game(make_rules("five_up"), [make_agent("random"), make_agent("greedy")], 7)
    record = game_record(state, seed=7, agents=["random", "greedy"])

Seeds: game ``k`` of a run with ``--seed S`` uses the seed :func:`game_seed` ``(S, k)``, the
first 32-bit word of ``numpy.random.SeedSequence([S, k])``; the record stores it as ``seed``.
Within a game, ``SeedSequence(seed)`` is split into one stream for the deals and leader draws
and one per seat for the agents, so ``play_game(rules, agents, record["seed"])`` with agents of
the same ids plays the same game again.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from allfives_env.engine import GameState
from allfives_env.observation import observe
from allfives_env.record import game_record, write_records
from allfives_env.rules import PRESETS, Rules, load_rules_yaml, make_rules, parse_overrides
from allfives_env.tiles import N_ACTIONS, action_to_str
from allfives_env.view import SeatView


def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` in a run started with ``seed``."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def play_game(rules: Rules, agents: Sequence[Any], seed: int, log: bool = True) -> GameState:
    """Play one whole game between ``agents`` (one per seat) and return the final state.

    Each agent gets ``act(obs, view)`` for its own seat only, with ``obs`` the environment's
    ``{"observation", "action_mask"}`` and ``view`` the :class:`SeatView`. An illegal answer
    raises ``ValueError`` naming the agent, the seat and the legal actions.
    """
    if len(agents) != rules.players:
        raise ValueError(f"{len(agents)} agents for {rules.players} seats: give one per seat")
    streams = np.random.SeedSequence(seed).spawn(1 + rules.players)
    for agent, stream in zip(agents, streams[1:]):
        agent.reset(seed=int(stream.generate_state(1)[0]))
    state = GameState(rules, np.random.default_rng(streams[0]), log=log)
    while not state.game_over:
        if state.hand_over:
            state.next_hand()
            continue
        seat = state.current
        legal = state.legal_actions()
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        mask[legal] = 1
        obs = {"observation": observe(state, seat, legal), "action_mask": mask}
        action = agents[seat].act(obs, SeatView.of(state, seat))
        if action not in legal:
            name = getattr(agents[seat], "name", type(agents[seat]).__name__)
            shown = ", ".join(action_to_str(a) for a in legal)
            raise ValueError(f"agent {name!r} at seat {seat} chose illegal action {action!r}; "
                             f"legal: {shown}")
        state.apply(int(action))
    return state


# ---------------------------------------------------------------------- command line
def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """The rule options shared by commands that build a rule set."""
    parser.add_argument("--preset", choices=sorted(PRESETS), default=None,
                        help="rule preset (default: the --rules file's, else all_fives)")
    parser.add_argument("--players", type=int, default=None, help="2, 3 or 4 seats (default 2)")
    parser.add_argument("--teams", action=argparse.BooleanOptionalAction, default=None,
                        help="4 seats: partnerships 0+2 against 1+3 (default: the preset's)")
    parser.add_argument("--rules", metavar="FILE", default=None,
                        help="a rules YAML file (preset: plus options), e.g. configs/rules/*.yaml")
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                        dest="overrides", help="override one rule option (repeatable), "
                        "e.g. --set target=300 --set win_check=end_of_hand")


def rules_from_args(args: argparse.Namespace) -> Rules:
    """Preset, then the --rules file, then --players/--teams, then --set overrides."""
    options: dict[str, Any] = dict(load_rules_yaml(args.rules)) if args.rules else {}
    preset = options.pop("preset", None)
    preset = args.preset or preset or "all_fives"
    if args.players is not None:
        options["players"] = args.players
    if args.teams is not None:
        options["teams"] = args.teams
    options.update(parse_overrides(args.overrides))
    return make_rules(preset, **options)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_rules_arguments(parser)
    parser.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    parser.add_argument("--seed", type=int, default=0,
                        help="run seed; game k uses game_seed(seed, k) (default 0)")
    parser.add_argument("--agents", nargs="+", default=["random"], metavar="ID",
                        help="agent id per seat, or one id for every seat (default: random)")
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="write the records here, one JSON document per line")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--engine", choices=("scalar", "batched"), default="scalar",
                        help="scalar (default), or batched: the same games (agents random, "
                        "greedy, heuristic) through the batched engine; needs numba")


def run(args: argparse.Namespace) -> int:
    from agents.base import make_agent

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
        from agents import simulate_batched
        from allfives_env.batched import kernels

        simulate_batched.check_agents(ids)
        try:
            kernels()
        except RuntimeError as exc:
            raise ValueError(str(exc)) from None
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


def side_name(rules: Rules, side: int) -> str:
    if rules.teams:
        return f"team {side} (seats {side}+{side + 2})"
    return f"seat {side}"


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
        lines.append(f"  {side_name(rules, side):<22} wins {w:>6}  ({100.0 * w / n:5.1f}%)")
    if unfinished:
        lines.append(f"  no winner (truncated)  {unfinished:>6}")
    lines.append(f"  mean hands per game {hands / n:.2f}; {n / max(elapsed, 1e-9):.1f} games/s")
    if out:
        lines.append(f"  records written to {out}")
    return "\n".join(lines)
