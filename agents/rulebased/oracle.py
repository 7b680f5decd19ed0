"""``oracle``: ``search`` that sees every hand: the ceiling of the strength table, never a player.

The same rollout search as ``search`` (:class:`allfives_agents.planning.search.SearchAgent`, the
same
options and defaults: ``oracle:sims=256,depth=2``), except that each world it searches is the
real game: every hand as it is, only the order of the boneyard (and which of its tiles stay undrawn)
shuffled, since nobody at the table knows that. How far a bot falls below 50% against it is how
much hidden hands cost that bot; ``search``'s own figure beside it gives the scale.

It is a measurement, so it is kept out of every place where something plays: it is not in the
agent registry (``make_agent``, ``allfives play``, the browser, training opponents and levels
cannot build it): it is a measuring stick (:func:`~allfives_agents.base.register_measure`),
which the one builder makes only when asked with ``measures=True``, as ``allfives eval
--agents ... oracle`` does (and :func:`make_oracle`),
and the evaluation's game loop hands it the live game through :class:`Binder`, a watcher of
:func:`allfives_env.game.match.play_game`. Asked to act on a game it was not bound to, it refuses.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from allfives_agents.base import Obs, make_agent, register_measure
from allfives_agents.options import split_agent_id
from allfives_agents.planning.search import SearchAgent, Worlds
from allfives_env.game.engine import GameState
from allfives_env.game.view import SeatView

__all__ = ["NAME", "Binder", "OracleSearch", "is_oracle", "make_oracle"]

NAME = "oracle"


def is_oracle(agent_id: str) -> bool:
    """Whether ``agent_id`` names the oracle (``oracle`` or ``oracle:<search options>``)."""
    return agent_id.partition(":")[0] == NAME


def make_oracle(agent_id: str, seed: int | None = None) -> OracleSearch:
    """Build ``oracle[:options]``; options as ``search``'s (one-line ValueError otherwise)."""
    if split_agent_id(agent_id)[0] != NAME:
        raise ValueError(f"{agent_id!r} is not an oracle id (oracle or oracle:sims=...)")
    agent = make_agent(agent_id, seed, measures=True)  # the one builder
    assert isinstance(agent, OracleSearch)
    return agent


class TrueWorlds:
    """Worlds that are the real game with the boneyard reshuffled: :class:`WorldSampler`'s
    interface (``sample()`` and ``rnd``)."""

    def __init__(self, state: GameState, rng: np.random.Generator) -> None:
        self.state = state
        self.rnd = random.Random(int(rng.integers(1 << 62)))
        self.rng = np.random.default_rng(int(rng.integers(1 << 62)))

    def sample(self) -> GameState:
        world = self.state.copy()
        # nothing of the real game is shared: its log, its dealer, its generator
        world.rng, world.dealer, world.log, world.history = self.rng, None, None, []
        rest = self.state.boneyard[self.state.bone_pos:]
        self.rnd.shuffle(rest)
        world.boneyard = self.state.boneyard[:self.state.bone_pos] + rest
        return world


@register_measure(NAME)
class OracleSearch(SearchAgent):
    """``search`` over the real game (see the module docstring). :meth:`bind` gives it the
    live state; :meth:`act` checks that the state is the one its view comes from."""

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        super().__init__(seed, **options)
        self.state: GameState | None = None

    def bind(self, state: GameState) -> None:
        self.state = state

    def act(self, obs: Obs, view: SeatView) -> int:
        s = self.state
        if s is None or s.current != view.seat or s.hands[view.seat] != view.hand:
            raise RuntimeError("oracle plays only inside allfives eval, which shows it the game")
        return super().act(obs, view)

    def world_sampler(self, view: SeatView) -> Worlds:
        assert self.state is not None
        return TrueWorlds(self.state, self.rng)


class Binder:
    """A watcher of :func:`allfives_env.game.match.play_game` that binds every oracle among
    ``agents`` to the game being played (the evaluation's only use of the live state)."""

    def __init__(self, agents: list[Any]) -> None:
        self.oracles = [a for a in agents if isinstance(a, OracleSearch)]

    def hand_started(self, state: GameState) -> None:
        for a in self.oracles:
            a.bind(state)

    def moved(self, state: GameState) -> None:
        pass
