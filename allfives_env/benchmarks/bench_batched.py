"""The batched engine's rows of ``allfives bench``: ``batched B=64``, ``B=1024``, ``B=4096``.

Each row plays random legal moves in B games at once through :class:`BatchedGames`; every
decision builds the acting seat's observation and legal mask (``observe_and_mask``), draws a
uniform legal action (``BatchedGames.random_actions``) and steps. Rate: decisions per second of
this process's CPU time, as the other rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from allfives_env.game.rules import make_rules

BATCHES = (64, 1024, 4096)
NAME = "batched B={}"


def available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def bench_batched(batch: int, seconds: float, players: int, seed: int) -> dict[str, Any]:
    from allfives_env.batched_engine.games import BatchedGames

    games = BatchedGames(make_rules(players=players), batch, seed=seed)
    games.reset()
    idx = np.arange(batch)
    streams = np.arange(batch, dtype=np.uint64) + np.uint64(seed)
    games.observe_and_mask()
    games.step_unchecked(games.random_actions(idx, streams))  # compile (or load the cache)
    steps = 0
    clock, cpu = time.perf_counter, time.process_time
    start, cpu_start = clock(), cpu()
    while clock() - start < seconds:
        games.observe_and_mask()
        games.step_unchecked(games.random_actions(idx, streams))  # a masked sampler
        steps += batch
    played = int(games.G[:, games.k.F_GAMES].sum()) - batch
    wall, used = clock() - start, cpu() - cpu_start
    return {"name": NAME.format(batch), "unit": "decisions/s", "steps": steps, "games": played,
            "wall_seconds": wall, "cpu_seconds": used, "rate": steps / used,
            "wall_rate": steps / wall}  # the fields of bench._row


def specs(players: int) -> list[tuple[str, Callable[[float, int], dict]]]:
    """The batched rows for ``bench._best_of_rounds`` (none without numba)."""
    if not available():
        return []
    def row(batch: int) -> Callable[[float, int], dict]:
        return lambda seconds, seed: bench_batched(batch, seconds, players, seed)

    return [(NAME.format(b), row(b)) for b in BATCHES]


def add_ratios(by: dict[str, float], ratios: dict[str, float]) -> None:
    """Batched rates against the scalar ``env()`` and the engine."""
    big = NAME.format(BATCHES[-1])
    if big not in by:
        return
    for b in BATCHES:
        ratios[f"{NAME.format(b)} / env"] = by[NAME.format(b)] / by["env()"]
    ratios[f"{big} / engine"] = by[big] / by["engine"]
