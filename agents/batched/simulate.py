"""``allfives simulate --engine batched``: the scalar run's games, played by the batched engine.

Game ``k`` of a run with ``--seed S`` has the seed ``G = game_seed(S, k)`` and follows
:mod:`allfives_env.game.match`'s convention exactly: hand ``h`` is dealt from
``default_rng([G, h])``, a random leader is drawn from ``default_rng(G)``, and the seat in
seat ``s`` is seeded with ``agent_seeds(G, n)[s]``. ``random`` seats draw
``legal[rng.integers(len(legal))]`` from that seed as ``RandomAgent`` does, ``greedy`` and
``heuristic`` seats run the batched bots (the scalar bots' choices), so both engines write
the very same records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from allfives_env.game.engine import Deal, random_deal
from allfives_env.game.match import agent_seeds
from allfives_env.game.rules import Rules
from allfives_env.records.record import FORMAT, _hand_json

AGENTS = ("random", "greedy", "heuristic")


def check_agents(ids: Sequence[str]) -> None:
    bad = [i for i in ids if i not in AGENTS]
    if bad:
        raise ValueError(f"--engine batched plays the agents {', '.join(AGENTS)}; "
                         f"got {', '.join(bad)}")


def play_records(rules: Rules, ids: Sequence[str], seeds: Sequence[int],
                 batch: int = 1024) -> list[dict[str, Any]]:
    """The records of the games with these seeds, ``batch`` games at a time."""
    from allfives_env.batched_engine.games import kernels

    check_agents(ids)
    try:
        kernels()
    except RuntimeError as exc:  # numba missing: the CLI prints this one line
        raise ValueError(str(exc)) from None
    records: list[dict[str, Any]] = []
    for start in range(0, len(seeds), batch):
        records += _play_chunk(rules, ids, list(seeds[start:start + batch]))
    return records


def _play_chunk(rules: Rules, ids: Sequence[str], seeds: list[int]) -> list[dict[str, Any]]:
    from allfives_agents.batched.bots import make_batched_bot
    from allfives_env.batched_engine.games import BatchedGames

    n = rules.players
    chance = [np.random.default_rng(s) for s in seeds]
    seat_rngs = [[np.random.default_rng(x) for x in agent_seeds(s, n)] for s in seeds]
    games: BatchedGames

    def dealer(b: int, hand_index: int) -> Deal:
        deal = random_deal(rules, np.random.default_rng([seeds[b], hand_index]))
        if games.needs_random_leader(b):
            deal.leader = int(chance[b].integers(n))
        return deal

    games = BatchedGames(rules, len(seeds), autoreset=False, log=True, dealer=dealer)
    games.reset()
    bots = {i: make_batched_bot(i) for i in set(ids) if i != "random"}
    hands: list[list[dict]] = [[] for _ in seeds]
    records: list[dict[str, Any] | None] = [None] * len(seeds)
    while games.in_play.any():
        actions = _choose(games, ids, bots, seat_rngs)
        result = games.step(actions)
        for b in np.flatnonzero(result.hand_over):
            hands[b].append(games.finished_hand(int(b)))
        for b in np.flatnonzero(result.game_over):
            winner = int(result.winners[b])
            records[b] = {
                "format": FORMAT, "rules": rules.to_dict(), "seed": seeds[b],
                "agents": list(ids), "hands": [_hand_json(h) for h in hands[b]],
                "final_scores": result.final_scores[b].tolist(),
                "winner": None if winner < 0 else winner,
                "truncated": bool(result.truncated[b]),
            }
    return [r for r in records if r is not None]


def _choose(games: Any, ids: Sequence[str], bots: dict, seat_rngs: list) -> np.ndarray:
    live = np.flatnonzero(games.in_play)
    current = games.current
    actions = np.full(games.batch, -1, dtype=np.int64)
    mask = games.legal_mask() if "random" in ids else None
    for seat, agent_id in enumerate(ids):
        idx = live[current[live] == seat]
        if not len(idx):
            continue
        if agent_id == "random" and mask is not None:
            for b in idx:
                legal = np.flatnonzero(mask[b])
                actions[b] = legal[int(seat_rngs[b][seat].integers(len(legal)))]
        else:
            actions[idx] = bots[agent_id].act(games, idx)
    return actions
