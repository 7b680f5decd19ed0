"""Baseline bots: random and greedy (heuristic and search live in their own modules)."""

from __future__ import annotations

from allfives_agents.base import Agent, Obs, register
from allfives_env.game.tiles import ACTION_TILE, TILE_HIGH, TILE_PIPS
from allfives_env.game.view import SeatView


@register("random", batched="allfives_agents.batched.bots:BatchedRandom")
class RandomAgent(Agent):
    """Uniform over the legal actions."""

    needs_obs = False

    def act(self, obs: Obs, view: SeatView) -> int:
        return int(view.legal[int(self.rng.integers(len(view.legal)))])


@register("greedy", batched="allfives_agents.batched.bots:BatchedGreedy")
class GreedyAgent(Agent):
    """Most points now; ties: the heaviest tile, then the higher half, then the lowest id."""

    needs_obs = False

    def act(self, obs: Obs, view: SeatView) -> int:
        def key(a: int) -> tuple[int, int, int, int]:
            t = ACTION_TILE[a]
            return (view.points_if(a), TILE_PIPS[t], TILE_HIGH[t], -a)

        return max(view.legal, key=key)
