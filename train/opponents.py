"""Who sits at the other seats during training and evaluation.

A *player* acts for one seat given the full :class:`GameState` but only ever shows its agent
what that seat may see (the observation vector and the :class:`SeatView`). Network policies
(the learner's current weights, its frozen snapshots, ``ckpt:`` checkpoints) run as plain numpy
(about 10 microseconds a decision) instead of through torch and SB3's ``predict()``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from agents.action_features import policy_input
from agents.base import Agent, make_agent
from agents.checkpoint import CheckpointAgent, check_table
from allfives_env.engine import GameState
from allfives_env.observation import observe
from allfives_env.tiles import N_ACTIONS
from allfives_env.view import SeatView
from train.policy_numpy import NumpyPolicy

SELF, SNAPSHOTS = "self", "snapshots"


class LazyObs(Mapping):
    """The ``{"observation", "action_mask"}`` dict of a seat, computed only when read
    (rule bots mostly read the :class:`SeatView` and never pay for the vector)."""

    def __init__(self, state: GameState, seat: int, legal: list[int]) -> None:
        self._state, self._seat, self._legal = state, seat, legal
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self._cache:
            if key == "observation":
                self._cache[key] = observe(self._state, self._seat, self._legal)
            elif key == "action_mask":
                self._cache[key] = legal_mask(self._legal)
            else:
                raise KeyError(key)
        return self._cache[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("observation", "action_mask"))

    def __len__(self) -> int:
        return 2


def legal_mask(legal: list[int]) -> np.ndarray:
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    mask[legal] = 1
    return mask


class Player:
    """Acts for a seat: ``act(state, seat) -> action``."""

    name = "player"

    def new_game(self, state: GameState) -> None:
        """Called when a game starts with this player at the table."""

    def act(self, state: GameState, seat: int) -> int:
        raise NotImplementedError


class BotPlayer(Player):
    """Any registered agent, fed its seat's observation and view."""

    def __init__(self, agent: Agent) -> None:
        self.agent, self.name = agent, agent.name

    def new_game(self, state: GameState) -> None:
        self.agent.reset()

    def act(self, state: GameState, seat: int) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return self.agent.act(LazyObs(state, seat, legal), SeatView.of(state, seat))


class PolicyPlayer(Player):
    """A numpy policy: argmax, or sampling when ``rng`` is given."""

    def __init__(self, policy: NumpyPolicy | None, name: str,
                 rng: np.random.Generator | None = None, card: dict[str, Any] | None = None
                 ) -> None:
        self.policy, self.name, self.rng, self.card = policy, name, rng, card

    def new_game(self, state: GameState) -> None:
        if self.card is not None:
            check_table(self.card, state.rules, self.name)

    def act(self, state: GameState, seat: int) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        if self.policy is None:  # no weights yet: uniform over the legal actions
            rng = self.rng if self.rng is not None else np.random.default_rng()
            return legal[int(rng.integers(len(legal)))]
        x = observe(state, seat, legal)
        if getattr(self.policy, "needs_features", False):
            x = policy_input(self.policy, x, SeatView.of(state, seat))
        return self.policy.act(x, legal_mask(legal), self.rng)


def make_player(agent_id: str, seed: int | None = None) -> Player:
    """A player for an agent id; ``ckpt:`` agents run as numpy policy players."""
    agent = make_agent(agent_id, seed=seed)
    if isinstance(agent, CheckpointAgent) and not agent.sample:
        return PolicyPlayer(agent.policy, agent_id, None, agent.card)
    return BotPlayer(agent)


class OpponentPool:
    """Weighted opponent entries: agent ids, ``self`` and ``snapshots`` (see TrainConfig)."""

    def __init__(self, entries: list[dict[str, Any]], rng: np.random.Generator,
                 keep: int = 10) -> None:
        self.rng, self.keep = rng, keep
        self.ids = [str(e["agent"]) for e in entries]
        weights = np.array([float(e.get("weight", 1.0)) for e in entries])
        self.probs = weights / weights.sum()
        seed = int(rng.integers(2**31))
        self.fixed = {i: make_player(i, seed) for i in self.ids if i not in (SELF, SNAPSHOTS)}
        self.current = PolicyPlayer(None, SELF, rng)
        self.snapshots: list[PolicyPlayer] = []

    def set_self(self, arrays: dict[str, np.ndarray]) -> None:
        self.current.policy = NumpyPolicy.from_arrays(arrays)

    def add_snapshot(self, arrays: dict[str, np.ndarray], name: str) -> None:
        self.snapshots.append(PolicyPlayer(NumpyPolicy.from_arrays(arrays), name, self.rng))
        del self.snapshots[:-self.keep]

    def sample(self) -> Player:
        choice = self.ids[int(self.rng.choice(len(self.ids), p=self.probs))]
        if choice == SELF or (choice == SNAPSHOTS and not self.snapshots):
            return self.current
        if choice == SNAPSHOTS:
            return self.snapshots[int(self.rng.integers(len(self.snapshots)))]
        return self.fixed[choice]
