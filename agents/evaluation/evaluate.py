"""``allfives eval``: a duplicate-format round robin between agents.

Every pair of entries plays the same seeded deals. Each deal is played once per **seating**
(:func:`allfives_env.game.match.seatings`, the project's one duplicate scheme): with 2 seats, twice
with the seats swapped; with 3 or 4 seats (no teams), every way of seating the two entries in
which both take part (6 with 3 seats, 14 with 4); with teams, an entry is a partnership (it
takes seats 0 and 2, then 1 and 3). Playing one deal from every seat cancels most of the
luck of the deal. Deals depend only on ``--seed`` and the deal number, so results do not
depend on ``--workers``.

Deal ``d`` is the game of seed ``game_seed(seed, d)`` played by the one game loop,
:func:`allfives_env.game.match.play_game` (see :mod:`allfives_env.game.match` for the seeding): so
``allfives simulate --seed S --agents A B`` writes, as its game ``d``, the same record as the
first seating of deal ``d`` of ``allfives eval --seed S --agents A B``.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import itertools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from allfives_agents.base import Agent, agent_ids_help, make_agent
from allfives_agents.evaluation.report import Outcome
from allfives_agents.evaluation.threads import one_thread
from allfives_agents.rulebased.oracle import Binder
from allfives_env.game.engine import GameState
from allfives_env.game.gameconfig import add_game_arguments, rules_from_args
from allfives_env.game.match import Clock, game_seed, play_game, seatings
from allfives_env.game.rules import Rules
from allfives_env.game.seeding import seed_arg
from allfives_env.records.record import game_record

__all__ = ["Outcome", "play_deal", "run_deal", "seatings", "tournament"]

#: ``agent_for(entry, seat)``: the agent that plays ``seat`` for entry 0 or 1 of a pairing.
AgentFor = Callable[[int, int], Agent]


# ---------------------------------------------------------------------- one deal
def play_deal(rules: Rules, agent_for: AgentFor, pair: tuple[int, int], deal: int, seed: int,
              records: bool = False) -> list[Outcome]:
    """Play deal ``deal`` (the game of seed ``seed``) once per seating."""
    out = []
    for k, seating in enumerate(seatings(rules)):
        agents = [agent_for(entry, s) for s, entry in enumerate(seating)]
        clock = Clock.zeros(rules.players)
        binder = Binder(agents)  # shows the game to an oracle entry, and to nothing else
        state = play_game(rules, agents, seed, log=records, clock=clock,
                          watcher=binder if binder.oracles else None)
        record = game_record(state, seed, [a.name for a in agents]) if records else None
        out.append(_outcome(pair, deal, k, seating, state, clock, record))
    return out


def _outcome(pair: tuple[int, int], deal: int, k: int, seating: tuple[int, ...],
             state: GameState, clock: Clock, record: dict[str, Any] | None) -> Outcome:
    rules = state.rules
    winner = None
    if state.winner is not None:
        winner = next(seating[s] for s in range(rules.players)
                      if rules.side_of(s) == state.winner)
    pts: list[list[float]] = [[], []]
    for side, entry in {rules.side_of(s): seating[s] for s in range(rules.players)}.items():
        pts[entry].append(state.scores[side])

    def per_entry(values: list[Any], e: int) -> list[Any]:
        return [values[s] for s in range(rules.players) if seating[s] == e]

    return Outcome(pair, deal, k, winner,
                   (sum(pts[0]) / len(pts[0]), sum(pts[1]) / len(pts[1])),
                   state.hand_index + 1,
                   (sum(per_entry(clock.seconds, 0)), sum(per_entry(clock.seconds, 1))),
                   (sum(per_entry(clock.moves, 0)), sum(per_entry(clock.moves, 1))),
                   (max(per_entry(clock.slowest, 0)), max(per_entry(clock.slowest, 1))),
                   record)


@dataclasses.dataclass(frozen=True)
class Task:
    rules: Rules
    ids: tuple[str, str]
    pair: tuple[int, int]
    deal: int
    seed: int
    records: bool


_AGENT_CACHE: dict[tuple[str, int, Rules], Agent] = {}


def _agent(agent_id: str, seat: int, rules: Rules) -> Agent:
    """A cached agent per (id, seat, table) in this process (the game loop re-seeds it per
    game; an id such as ``ckpt:best`` resolves to the model of its first table)."""
    key = (agent_id, seat, rules)
    agent = _AGENT_CACHE.get(key)
    if agent is None:
        agent = _AGENT_CACHE[key] = build_agent(agent_id, seat)
        one_thread()
    return agent


def build_agent(agent_id: str, seed: int | None) -> Agent:
    """The one builder, allowing the evaluation's own measuring stick ``oracle``
    (agents/rulebased/oracle.py, which sees every hand and can be built nowhere else)."""
    return make_agent(agent_id, seed, measures=True)


def run_deal(task: Task) -> list[Outcome]:
    """Play one deal of one pairing from every seating (a worker's unit of work)."""
    return play_deal(task.rules, lambda e, s: _agent(task.ids[e], s, task.rules), task.pair,
                     task.deal, game_seed(task.seed, task.deal), task.records)


# ---------------------------------------------------------------------- tournament
def tournament(rules: Rules, ids: Sequence[str], games: int, seed: int = 0, workers: int = 1,
               records: bool = False, progress: bool = False) -> Iterator[Outcome]:
    """Yield the outcomes of the round robin, in a fixed order (pair, deal, seating). The
    deals are made as they are played (memory flat in ``games``)."""
    n_seat = len(seatings(rules))
    n_deals = -(-games // n_seat)
    pairs = list(itertools.combinations(range(len(ids)), 2))
    tasks = (Task(rules, (ids[i], ids[j]), (i, j), d, seed, records)
             for i, j in pairs for d in range(n_deals))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(pairs) * n_deals * n_seat, unit="game", file=sys.stderr,
                   smoothing=0.05)
    try:
        for outcomes in map_tasks(run_deal, tasks, workers, n_tasks=len(pairs) * n_deals):
            if bar is not None:
                bar.update(len(outcomes))
            yield from outcomes
    finally:
        if bar is not None:
            bar.close()


def cores() -> int:
    """The CPU cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def worker_count(workers: int, n_tasks: int) -> int:
    """``workers`` capped by the cores and by ``n_tasks`` (never more processes than either)."""
    return max(1, min(workers, cores(), n_tasks))


def map_tasks(fn: Any, tasks: Iterable[Any], workers: int, *, n_tasks: int | None = None,
              one_thread_here: bool = True) -> Iterator[Any]:
    """``fn`` over ``tasks`` in order: here when ``workers <= 1`` (torch and numpy's BLAS on
    one thread unless ``one_thread_here`` is False), else in a pool of ``workers`` processes
    (one thread in each: :func:`allfives_agents.evaluation.threads.one_thread`), capped by the cores
    and
    the number of tasks (:func:`worker_count`; ``n_tasks``: their number when ``tasks`` is a
    generator). Tasks are taken from ``tasks`` as they are needed: a bounded window is in
    flight, so a generator of any length runs in flat memory."""
    if n_tasks is None:
        tasks = list(tasks)
        n_tasks = len(tasks)
    workers = worker_count(workers, n_tasks)
    if workers <= 1:
        if one_thread_here:
            one_thread()
        yield from map(fn, tasks)
        return
    import multiprocessing as mp

    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    chunk = max(1, min(8, n_tasks // (workers * 16)))
    with mp.get_context(method).Pool(workers, initializer=one_thread) as pool:
        pending: collections.deque[Any] = collections.deque()
        for part in _chunks(tasks, chunk):
            pending.append(pool.apply_async(_run_chunk, (fn, part)))
            if len(pending) >= 4 * workers:  # the window: a few chunks per worker
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()


def _chunks(tasks: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(tasks)
    while part := list(itertools.islice(it, size)):
        yield part


def _run_chunk(fn: Any, part: list[Any]) -> list[Any]:
    """A worker's unit: ``fn`` over a few tasks."""
    return [fn(task) for task in part]


# ---------------------------------------------------------------------- CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", nargs="+", required=True, metavar="ID",
                        help="two or more agent ids, e.g. greedy heuristic search:sims=400; "
                             + agent_ids_help() + "; and, here only, oracle[:search options]: "
                             "search that sees every hand (the ceiling, docs/strength.md)")
    add_game_arguments(parser)
    parser.add_argument("--games", type=int, default=200,
                        help="games per pairing, rounded up to whole duplicate sets (default 200)")
    parser.add_argument("--seed", type=seed_arg, default=0, help="tournament seed (default 0)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="worker processes (default: the number of CPU cores; never more "
                             "than the cores, nor than the deals to play)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--csv", metavar="PATH", help="write the pairing table as CSV")
    parser.add_argument("--records", metavar="PATH", help="write every game as JSON Lines")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(args: argparse.Namespace) -> int:
    from allfives_agents.evaluation import report
    from allfives_env.inputs.paths import check_output_path

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
    for agent_id in ids:  # fail early, in this process, on a bad id: built once, as seat 0's
        agent = _agent(agent_id, 0, rules)  # the cached agent these games (and forked workers) use
        for_rules = getattr(agent, "for_rules", None)  # level:NAME: does it play this table?
        if for_rules is not None:
            for_rules(rules)
    stream = tournament(rules, ids, args.games, args.seed, args.workers,
                        records=bool(args.records), progress=not args.no_progress)
    tally = report.tally(stream, args.records)  # sums only: memory flat in --games
    summary = tally.summary(rules, ids, args.seed)
    print(report.format_table(summary))
    if args.json:
        report.write_json(args.json, summary)
    if args.csv:
        report.write_csv(args.csv, summary)
    return 0
