"""Tournament arithmetic: Wilson intervals for win rates and Bradley-Terry (Elo) ratings.

Conventions (also in docs/bots-and-eval.md):

* A draw counts as half a win. A win rate is ``(wins + draws / 2) / games``.
* The 95% interval is the Wilson score interval with ``n = games`` and the half-counted
  win rate as the observed proportion. It treats games as independent; duplicate games
  (the same deal with the seats swapped) are negatively correlated when the players are of
  similar strength, which makes the interval conservative.
* Elo ratings are the maximum-likelihood Bradley-Terry strengths of all pairwise results,
  on the Elo scale (a 400-point gap means 10:1 odds), shifted so that their mean is 1500.
  Every pair that played gets ``prior_draws`` virtual draws (default 1), so that a player
  who won every game still gets a finite rating.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

Z95 = 1.959963984540054
ELO_MEAN = 1500.0


def win_rate(wins: float, draws: float, games: int) -> float:
    """``(wins + draws / 2) / games`` (0.5 when no games were played)."""
    if games < 0 or wins < 0 or draws < 0 or wins + draws > games:
        raise ValueError(f"bad counts: wins={wins}, draws={draws}, games={games}")
    return (wins + draws / 2) / games if games else 0.5


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of an observed proportion ``p`` over ``n`` trials."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"proportion {p} must be in [0, 1]")
    if n <= 0:
        return 0.0, 1.0
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def bradley_terry(
    n_players: int,
    results: Mapping[tuple[int, int], tuple[float, int]],
    prior_draws: float = 1.0,
    iters: int = 10_000,
    tol: float = 1e-10,
) -> list[float]:
    """Bradley-Terry strengths (mean log-strength 0, natural log scale).

    ``results[(i, j)] = (score_i, games)``: player ``i`` scored ``score_i`` (wins plus half
    the draws) in ``games`` games against ``j``. Fitted with Hunter's MM iterations.
    Players that meet nobody (directly or through others) get strength 0.
    """
    wins = [0.0] * n_players
    games: dict[tuple[int, int], float] = {}
    for (i, j), (score, n) in results.items():
        if i == j or not (0 <= i < n_players and 0 <= j < n_players):
            raise ValueError(f"bad pairing {(i, j)} for {n_players} players")
        if n <= 0:
            continue
        n_total = n + prior_draws
        wins[i] += score + prior_draws / 2
        wins[j] += n - score + prior_draws / 2
        key = (min(i, j), max(i, j))
        games[key] = games.get(key, 0.0) + n_total
    p = [1.0] * n_players
    for _ in range(iters):
        denom = [0.0] * n_players
        for (i, j), played in games.items():
            d = played / (p[i] + p[j])
            denom[i] += d
            denom[j] += d
        new = [wins[k] / denom[k] if denom[k] > 0 else 1.0 for k in range(n_players)]
        new = [max(x, 1e-300) for x in new]
        g = math.exp(sum(math.log(x) for x in new) / n_players)
        new = [x / g for x in new]
        delta = max(abs(math.log(a) - math.log(b)) for a, b in zip(new, p))
        p = new
        if delta < tol:
            break
    return [math.log(x) for x in p]


def elo_ratings(
    n_players: int,
    results: Mapping[tuple[int, int], tuple[float, int]],
    prior_draws: float = 1.0,
) -> list[float]:
    """Bradley-Terry strengths on the Elo scale, mean :data:`ELO_MEAN`."""
    logs = bradley_terry(n_players, results, prior_draws)
    return [ELO_MEAN + 400.0 / math.log(10.0) * x for x in logs]


def expected_score(elo_a: float, elo_b: float) -> float:
    """The Elo model's expected score of A against B."""
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
