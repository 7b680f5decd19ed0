"""What the second and third plies cost: batched per-action features with and without
``counter`` (``k`` 9 against 10) and with ``ply3`` and ``can_next`` (``k`` 12), measured in
one process, each for about a second, three times, on 1,024 games of all_fives with 2 seats:
at the deal, and after 6 random moves in each game. Run from the repository root:
``PYTHONPATH=. python experiments/features/bench_features.py``."""

from __future__ import annotations

import time

import numpy as np

from allfives_agents.batched.features import batched_features
from allfives_env.batched_engine.games import BatchedGames
from allfives_env.game.rules import make_rules


def rate(games: BatchedGames, k: int) -> float:
    out = np.empty((games.batch, 140, k), np.float32)
    batched_features(games, out=out)  # compiled before timing
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < 1.0:
        batched_features(games, out=out)
        n += 1
    return n * games.batch / (time.perf_counter() - start)


def main() -> None:
    games = BatchedGames(make_rules("all_fives", players=2), 1024, seed=0)
    games.reset()
    rng = np.random.default_rng(0)
    for moves in (0, 6):
        for _ in range(moves):
            _obs, mask = games.observe_and_mask()
            games.step((rng.random(mask.shape) * mask).argmax(1))
        for _ in range(3):
            k9, k10, k12 = rate(games, 9), rate(games, 10), rate(games, 12)
            print(f"after {moves} moves: k=9 {k9:,.0f} positions/s, k=10 {k10:,.0f}, "
                  f"k=12 {k12:,.0f}; ratios 10/9 {k10 / k9:.2f}, 12/10 {k12 / k10:.2f}")


if __name__ == "__main__":
    main()
