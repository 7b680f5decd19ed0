"""``allfives eval``: a duplicate-format round robin between agents.

Every pair of entries plays the same seeded deals. Each deal is played once per **seating**:
with 2 seats, twice with the seats swapped; with 3 or 4 seats (no teams), every way of
seating the two entries in which both take part (6 with 3 seats, 14 with 4); with teams, an
entry is a partnership (it takes seats 0 and 2, then 1 and 3). Playing one deal from every
seat cancels most of the luck of the deal. Deals depend only on ``--seed`` and the deal
number, so results do not depend on ``--workers``.

Game ``g`` of deal ``d`` uses the seed ``game_seed(seed, d)``: hand ``k`` is dealt from
``numpy.random.default_rng([game_seed, k])`` and other chance (a random leader) comes from
``default_rng(game_seed)``; :func:`play_game` with that seed replays it.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from agents.base import Agent, Obs, make_agent
from allfives_env.engine import Deal, Dealer, GameState, random_deal
from allfives_env.observation import action_mask, observe
from allfives_env.rules import Rules
from allfives_env.simulate import add_rules_arguments, game_seed, rules_from_args
from allfives_env.tiles import action_to_str
from allfives_env.view import SeatView

NO_OBS: Obs = {}  # what agents with ``needs_obs = False`` receive instead of the observation


def seeded_dealer(rules: Rules, seed: int) -> Dealer:
    """Hand ``k`` is dealt from ``default_rng([seed, k])``, whatever happened before."""

    def deal(k: int, _rng: np.random.Generator) -> Deal:
        return random_deal(rules, np.random.default_rng([seed, k]))

    return deal


@dataclasses.dataclass
class Clock:
    """Decision time and count per seat."""

    seconds: list[float]
    moves: list[int]
    slowest: list[float]

    @classmethod
    def zeros(cls, n: int) -> Clock:
        return cls([0.0] * n, [0] * n, [0.0] * n)


def play_game(rules: Rules, agents: Sequence[Agent], seed: int, log: bool = False,
              clock: Clock | None = None) -> GameState:
    """Play one whole game, ``agents[s]`` in seat ``s``; return the final state."""
    state = GameState(rules, np.random.default_rng(seed), dealer=seeded_dealer(rules, seed),
                      log=log)
    needs_obs = [getattr(a, "needs_obs", True) for a in agents]
    while not state.game_over:
        if state.hand_over:
            state.next_hand()
            continue
        seat = state.current
        view = SeatView.of(state, seat)
        obs = NO_OBS
        if needs_obs[seat]:
            obs = {"observation": observe(state, seat, list(view.legal)),
                   "action_mask": action_mask(state)}
        start = time.perf_counter()
        action = agents[seat].act(obs, view)
        if clock is not None:
            spent = time.perf_counter() - start
            clock.seconds[seat] += spent
            clock.moves[seat] += 1
            clock.slowest[seat] = max(clock.slowest[seat], spent)
        if action not in view.legal:
            legal = ", ".join(action_to_str(a) for a in view.legal)
            raise ValueError(f"agent {agents[seat].name!r} chose illegal action {action!r} "
                             f"in seat {seat}; legal: {legal}")
        state.apply(int(action))
    return state


def seatings(rules: Rules) -> list[tuple[int, ...]]:
    """Per seating, the entry (0 or 1 of a pair) in each seat."""
    if rules.teams:
        return [(0, 1, 0, 1), (1, 0, 1, 0)]
    return [s for s in itertools.product((0, 1), repeat=rules.players) if 0 in s and 1 in s]


# ---------------------------------------------------------------------- one deal
@dataclasses.dataclass
class Outcome:
    """One game of a pairing: ``winner`` is 0 (entry a), 1 (entry b) or None (draw)."""

    pair: tuple[int, int]
    deal: int
    seating: int
    winner: int | None
    points: tuple[float, float]  # each entry's final score (mean over its sides)
    hands: int
    seconds: tuple[float, float]
    moves: tuple[int, int]
    slowest: tuple[float, float]
    record: dict[str, Any] | None = None


@dataclasses.dataclass(frozen=True)
class Task:
    rules: Rules
    ids: tuple[str, str]
    pair: tuple[int, int]
    deal: int
    seed: int
    records: bool


_AGENT_CACHE: dict[tuple[str, int], Agent] = {}


def _agent(agent_id: str, seat: int, seed: int) -> Agent:
    """A cached agent per (id, seat) in this process, re-seeded for each game."""
    key = (agent_id, seat)
    agent = _AGENT_CACHE.get(key)
    if agent is None:
        agent = _AGENT_CACHE[key] = make_agent(agent_id, seed)
        _limit_torch_threads()
    agent.reset(seed)
    return agent


def _limit_torch_threads() -> None:
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def run_deal(task: Task) -> list[Outcome]:
    """Play one deal of one pairing from every seating."""
    rules, out = task.rules, []
    gs = game_seed(task.seed, task.deal)
    for k, seating in enumerate(seatings(rules)):
        ids = [task.ids[e] for e in seating]
        agent_seeds = np.random.SeedSequence([gs, k]).generate_state(rules.players)
        agents = [_agent(ids[s], s, int(agent_seeds[s])) for s in range(rules.players)]
        clock = Clock.zeros(rules.players)
        state = play_game(rules, agents, gs, log=task.records, clock=clock)
        out.append(_outcome(task, k, seating, state, clock, ids, gs))
    return out


def _outcome(task: Task, k: int, seating: tuple[int, ...], state: GameState, clock: Clock,
             ids: list[str], gs: int) -> Outcome:
    rules = state.rules
    winner = None
    if state.winner is not None:
        winner = next(seating[s] for s in range(rules.players)
                      if rules.side_of(s) == state.winner)
    pts: list[list[float]] = [[], []]
    for side, entry in {rules.side_of(s): seating[s] for s in range(rules.players)}.items():
        pts[entry].append(state.scores[side])
    per = [[clock.seconds[s] for s in range(rules.players) if seating[s] == e] for e in (0, 1)]
    mv = [[clock.moves[s] for s in range(rules.players) if seating[s] == e] for e in (0, 1)]
    slow = [[clock.slowest[s] for s in range(rules.players) if seating[s] == e] for e in (0, 1)]
    record = None
    if task.records:
        from allfives_env.record import game_record

        record = game_record(state, gs, ids)
    return Outcome(task.pair, task.deal, k, winner,
                   (sum(pts[0]) / len(pts[0]), sum(pts[1]) / len(pts[1])),
                   state.hand_index + 1, (sum(per[0]), sum(per[1])), (sum(mv[0]), sum(mv[1])),
                   (max(slow[0]), max(slow[1])), record)


# ---------------------------------------------------------------------- tournament
def tournament(rules: Rules, ids: Sequence[str], games: int, seed: int = 0, workers: int = 1,
               records: bool = False, progress: bool = False) -> Iterator[Outcome]:
    """Yield the outcomes of the round robin, in a fixed order (pair, deal, seating)."""
    n_seat = len(seatings(rules))
    n_deals = -(-games // n_seat)
    tasks = [Task(rules, (ids[i], ids[j]), (i, j), d, seed, records)
             for i, j in itertools.combinations(range(len(ids)), 2) for d in range(n_deals)]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks) * n_seat, unit="game", file=sys.stderr, smoothing=0.05)
    try:
        for outcomes in _map(run_deal, tasks, workers):
            if bar is not None:
                bar.update(len(outcomes))
            yield from outcomes
    finally:
        if bar is not None:
            bar.close()


def _map(fn: Any, tasks: list[Task], workers: int) -> Iterator[list[Outcome]]:
    if workers <= 1 or len(tasks) <= 1:
        _limit_torch_threads()
        yield from map(fn, tasks)
        return
    import multiprocessing as mp

    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    chunk = max(1, min(8, len(tasks) // (workers * 16)))
    with mp.get_context(method).Pool(workers, initializer=_limit_torch_threads) as pool:
        yield from pool.imap(fn, tasks, chunksize=chunk)


# ---------------------------------------------------------------------- CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", nargs="+", required=True, metavar="ID",
                        help="two or more agent ids, e.g. greedy heuristic search:sims=400")
    add_rules_arguments(parser)
    parser.add_argument("--games", type=int, default=200,
                        help="games per pairing, rounded up to whole duplicate sets (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="worker processes (default: the number of CPU cores)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--csv", metavar="PATH", help="write the pairing table as CSV")
    parser.add_argument("--records", metavar="PATH", help="write every game as JSON Lines")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(args: argparse.Namespace) -> int:
    from agents import report
    from allfives_env.paths import check_output_path

    for flag in ("json", "csv", "records"):
        if getattr(args, flag):
            check_output_path(getattr(args, flag), f"--{flag}")
    ids = list(args.agents)
    if len(ids) < 2:
        raise ValueError("--agents needs at least two agent ids")
    if len(set(ids)) != len(ids):
        raise ValueError(f"--agents must be distinct ids (got {' '.join(ids)})")
    if args.games < 1:
        raise ValueError(f"--games={args.games}: must be at least 1")
    if args.workers < 1:
        raise ValueError(f"--workers={args.workers}: must be at least 1")
    rules = rules_from_args(args)
    for agent_id in ids:  # fail early, in this process, on a bad id
        make_agent(agent_id, 0)
    stream = tournament(rules, ids, args.games, args.seed, args.workers,
                        records=bool(args.records), progress=not args.no_progress)
    outcomes = report.collect(stream, args.records)
    summary = report.summarize(rules, ids, outcomes, args.seed)
    print(report.format_table(summary))
    if args.json:
        report.write_json(args.json, summary)
    if args.csv:
        report.write_csv(args.csv, summary)
    return 0
