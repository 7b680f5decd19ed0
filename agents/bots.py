"""Baseline bots: random and greedy (heuristic and search live in their own modules)."""

from __future__ import annotations

from allfives_env.tiles import ACTION_TILE, TILE_HIGH, TILE_PIPS
from allfives_env.view import SeatView
from agents.base import Agent, Obs, register


@register("random")
class RandomAgent(Agent):
    """Uniform over the legal actions."""

    def act(self, obs: Obs, view: SeatView) -> int:
        return int(view.legal[int(self.rng.integers(len(view.legal)))])


def immediate_points(view: SeatView, action: int) -> int:
    """Points ``action`` scores now, from the public layout alone."""
    from allfives_env.tiles import IS_DOUBLE, LEAD, N_ENDS, OTHER_HALF

    t, end = divmod(action, N_ENDS)
    if end == LEAD:
        return TILE_PIPS[t] if TILE_PIPS[t] % 5 == 0 else 0
    i, total = end - 1, 0
    for j in range(view.n_arms):
        if j == i:
            total += OTHER_HALF[t * 7 + view.ends[j]] * (2 if IS_DOUBLE[t] else 1)
        elif j < 2 or view.cnt[j]:
            total += view.ends[j] * (1 + view.dbl[j])
    return total if total % 5 == 0 else 0


@register("greedy")
class GreedyAgent(Agent):
    """Most points now; ties: the heaviest tile, then the higher half, then the lowest id."""

    def act(self, obs: Obs, view: SeatView) -> int:
        def key(a: int) -> tuple[int, int, int, int]:
            t = ACTION_TILE[a]
            return (immediate_points(view, a), TILE_PIPS[t], TILE_HIGH[t], -a)

        return max(view.legal, key=key)
