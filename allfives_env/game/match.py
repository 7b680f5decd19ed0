"""The one game loop: play a game from rules, seats and a seed.

Every command and the training code play through this module: ``allfives simulate``,
``allfives eval``, ``allfives play``, training's evaluation and the training env's opponents.

**Seats.** A seat is anything with ``act(obs, view) -> action`` (:class:`Seat`; every agent of
:mod:`agents` is one). It receives only what its seat may know: ``view`` is the
:class:`~allfives_env.game.view.SeatView` and ``obs`` the environment's
``{"observation", "action_mask"}`` for the same seat (an empty mapping for seats whose
``needs_obs`` is false; they read the view). Nothing a seat receives holds the
:class:`~allfives_env.game.engine.GameState`.

**Seeds.** Game ``g`` of a run with seed ``S`` has the seed ``game_seed(S, g)`` (the first
32-bit word of ``numpy.random.SeedSequence([S, g])``), stored in its record as ``seed``.
Within a game with seed ``G``, hand ``k`` is dealt from ``numpy.random.default_rng([G, k])``
whatever happened before (so every seating of a duplicate match gets the same hands), other
chance (a random leader) comes from ``default_rng(G)``, and the seat in seat ``s`` is reset
with ``agent_seeds(G, n)[s]``. So ``play_game(rules, seats, record["seed"])`` with seats of
the same ids plays a recorded game again, whichever command wrote it.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

import numpy as np

from allfives_env.game.engine import Deal, Dealer, GameState, random_deal
from allfives_env.game.observation import observe
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import N_ACTIONS, action_to_str
from allfives_env.game.view import SeatView

Obs = Mapping[str, np.ndarray]
NO_OBS: Obs = {}  # what seats with ``needs_obs = False`` receive instead of the observation


class Seat(Protocol):
    """Who plays a seat: an agent (the agents' interface, one floor up: docs/architecture.md)."""

    name: str

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, obs: Obs, view: SeatView) -> int: ...


class Watcher(Protocol):
    """Optional hooks of the game loop (``allfives play`` prints the game through them)."""

    def hand_started(self, state: GameState) -> None: ...

    def moved(self, state: GameState) -> None: ...


class IllegalActionError(ValueError):
    """A seat answered with an action that is not legal."""


# ---------------------------------------------------------------------- seeds
def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` in a run started with ``seed``."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def seeded_dealer(rules: Rules, seed: int) -> Dealer:
    """Hand ``k`` is dealt from ``default_rng([seed, k])``, whatever happened before."""

    def deal(k: int, _rng: np.random.Generator) -> Deal:
        return random_deal(rules, np.random.default_rng([seed, k]))

    return deal


def agent_seeds(seed: int, players: int) -> list[int]:
    """The seed each seat's agent is reset with in the game of seed ``seed``."""
    return [int(x) for x in np.random.SeedSequence([seed, 1]).generate_state(players)]


def new_game(rules: Rules, seed: int, log: bool = True) -> GameState:
    """The game of seed ``seed`` (see the module docstring), before its first move."""
    return GameState(rules, np.random.default_rng(seed), dealer=seeded_dealer(rules, seed),
                     log=log)


# ---------------------------------------------------------------------- one decision
def legal_mask(legal: Sequence[int]) -> np.ndarray:
    """The ``action_mask`` of a legal-action list: int8, 1 where legal."""
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    mask[list(legal)] = 1
    return mask


def seat_input(state: GameState, seat: int, needs_obs: bool = True) -> tuple[Obs, SeatView]:
    """What ``seat`` is given to decide: its observation (or :data:`NO_OBS`) and its view."""
    view = SeatView.of(state, seat)
    if not needs_obs:
        return NO_OBS, view
    legal = list(view.legal)
    return {"observation": observe(state, seat, legal), "action_mask": legal_mask(legal)}, view


@dataclasses.dataclass
class Clock:
    """Decision time and count per seat (a hook of :func:`play_game`)."""

    seconds: list[float]
    moves: list[int]
    slowest: list[float]

    @classmethod
    def zeros(cls, n: int) -> Clock:
        return cls([0.0] * n, [0] * n, [0.0] * n)

    def add(self, seat: int, spent: float) -> None:
        self.seconds[seat] += spent
        self.moves[seat] += 1
        self.slowest[seat] = max(self.slowest[seat], spent)


def decide(agent: Seat, state: GameState, clock: Clock | None = None) -> int:
    """Ask ``agent`` for the move of the seat to act; :class:`IllegalActionError` when its
    answer is not legal."""
    seat = state.current
    obs, view = seat_input(state, seat, getattr(agent, "needs_obs", True))
    start = time.perf_counter()
    action = agent.act(obs, view)
    if clock is not None:
        clock.add(seat, time.perf_counter() - start)
    if action not in view.legal:
        shown = ", ".join(action_to_str(a) for a in view.legal)
        name = getattr(agent, "name", type(agent).__name__)
        raise IllegalActionError(f"agent {name!r} at seat {seat} chose illegal action "
                                 f"{action!r}; legal: {shown}")
    return int(action)


# ---------------------------------------------------------------------- whole games
def advance(state: GameState, seats: Sequence[Seat | None], until: int | None = None,
            clock: Clock | None = None, watcher: Watcher | None = None,
            skip_forced: bool = False, until_any: Collection[int] = ()) -> None:
    """Play on until the game ends or seat ``until`` (or any seat of ``until_any``) must act,
    dealing new hands as they come. Those seats may be None in ``seats``: the caller plays
    them. ``skip_forced`` (the training envs): a seat with a single legal move plays it
    without being asked."""
    while not state.game_over:
        if state.hand_over:
            state.next_hand()
            if watcher is not None:
                watcher.hand_started(state)
        elif state.current == until or state.current in until_any:
            return
        else:
            agent = seats[state.current]
            assert agent is not None, f"seat {state.current} has no agent"
            forced = state.legal_actions() if skip_forced else None
            if forced is not None and len(forced) == 1:
                state.apply(forced[0])
            else:
                state.apply(decide(agent, state, clock))
            if watcher is not None:
                watcher.moved(state)


def play_game(rules: Rules, seats: Sequence[Seat], seed: int, log: bool = True,
              clock: Clock | None = None, watcher: Watcher | None = None) -> GameState:
    """Play the whole game of seed ``seed`` with ``seats[s]`` in seat ``s``; return the final
    state (its ``history`` makes the record when ``log``)."""
    if len(seats) != rules.players:
        raise ValueError(f"{len(seats)} agents for {rules.players} seats: give one per seat")
    for agent, agent_seed in zip(seats, agent_seeds(seed, rules.players)):
        agent.reset(seed=agent_seed)
    state = new_game(rules, seed, log)
    if watcher is not None:
        watcher.hand_started(state)
    advance(state, seats, None, clock, watcher)
    return state


def seatings(rules: Rules) -> list[tuple[int, ...]]:
    """The duplicate scheme: per seating, the entry (0 or 1 of a pair) in each seat. With 2
    seats, both ways round; with teams, each entry takes one partnership; with 3 or 4 seats
    and no teams, every way of seating the two entries in which both take part."""
    if rules.teams:
        return [(0, 1, 0, 1), (1, 0, 1, 0)]
    return [s for s in itertools.product((0, 1), repeat=rules.players) if 0 in s and 1 in s]
