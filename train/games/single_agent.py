"""A single-agent Gymnasium view of All Fives for SB3: the learner against a pool.

Each game the learner takes a seat drawn at random; every other seat is played inside
:meth:`AllFivesSingleAgentEnv.step` by an opponent drawn from the pool (with teams: the
opposing team shares one draw, and the learner's partner is ``partner``). One episode is one
whole game (a series of hands); a game that ends before the learner's first move (possible
with a low ``target`` or ``hand_size=1``) is dealt again, so ``reset()`` always returns a game
in which the learner has a move. The reward of a step is everything that happened to the
score margin from the learner's move until its next decision, opponents' turns and hand-end
scoring included, plus a terminal win/loss reward:

* ``margin_reward * (delta own side score - mean delta of the other sides) / target``
* ``+win_reward`` for a win, ``-win_reward / (sides - 1)`` for a loss, 0 for a truncated game.

``action_view`` (``raw``, ``facts``, ``heuristic``; :mod:`allfives_env.envs.action_views`): each
observation is the 386 floats followed by the view's ``[140, F]`` rows flattened.
``action_masks()`` gives the legal actions (sb3-contrib's MaskablePPO), and so does
``info["action_mask"]`` ([140] bool, all False once the episode is over) after every ``reset``
and ``step``, so ``gymnasium.make_vec(..., vectorization_mode="sync"|"async")`` has it in
its infos as the batched vector env does. An illegal action
ends the episode as a loss (reward ``-2 * win_reward``, ``info["illegal_action"]``), as in
PettingZoo's classic games.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np

import allfives_agents.features.action_views  # noqa: F401  (registers the heuristic view)
from allfives_agents.base import Agent, make_agent
from allfives_env.env import _obs_bounds
from allfives_env.envs.action_views import action_view_features, check_action_view, flat_bounds
from allfives_env.game.engine import GameState
from allfives_env.game.match import advance, legal_mask, new_game
from allfives_env.game.observation import observe
from allfives_env.game.rules import Rules, make_rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_env.game.view import SeatView
from allfives_train.games.opponents import SELF, OpponentPool

MAX_DEALS = 1000


class AllFivesSingleAgentEnv(gym.Env):
    """The learner's seat of a game whose other seats are played by a pool."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, rules: Rules | None = None, opponents: list[dict[str, Any]] | None = None,
                 partner: str = SELF, margin_reward: float = 1.0, win_reward: float = 1.0,
                 snapshot_keep: int = 10, seed: int | None = None,
                 action_view: str = "raw") -> None:
        super().__init__()
        self.rules = rules or make_rules()
        self.action_view = check_action_view(action_view)
        self.observation_space = gym.spaces.Box(*flat_bounds(*_obs_bounds(), action_view),
                                                dtype=np.float32)
        self.action_space = gym.spaces.Discrete(N_ACTIONS)
        self.margin_reward, self.win_reward = float(margin_reward), float(win_reward)
        self._entries = opponents or [{"agent": "greedy", "weight": 1.0}]
        self._partner_id, self._keep = partner, snapshot_keep
        self._build(np.random.default_rng(seed))
        self.state: GameState | None = None
        self.seat = 0
        self._legal: list[int] = []

    def _build(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self.pool = OpponentPool(self._entries, rng, self._keep)
        self.partner: Agent | None = None
        if self.rules.teams:
            self.partner = (self.pool.current if self._partner_id == SELF
                            else make_agent(self._partner_id, int(rng.integers(2**31))))

    # ------------------------------------------------------------------ pool updates
    def set_self(self, arrays: dict[str, np.ndarray]) -> None:
        """Give the ``self`` opponents (and a ``self`` partner) the learner's current weights."""
        self.pool.set_self(arrays)

    def add_snapshot(self, arrays: dict[str, np.ndarray], name: str) -> None:
        self.pool.add_snapshot(arrays, name)

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:  # reseed the game, the seat draw and the opponents alike
            self._rng = np.random.default_rng(seed)
            self.pool.set_rng(self._rng)
        for _ in range(MAX_DEALS):  # a game over before the learner acts is dealt again
            self._new_game()
            if not self.game.game_over:
                return self._obs(), {"seat": self.seat, "action_mask": self.action_masks()}
        raise RuntimeError(f"{MAX_DEALS} games in a row ended before the learner's first move "
                           f"(rules {self.rules.to_dict()}): the rules leave it no move")

    def _new_game(self) -> None:
        """Deal a game, seat the learner and the pool, and play up to the learner's turn."""
        rng, n = self._rng, self.rules.players
        self.state = new_game(self.rules, int(rng.integers(2**32)), log=False)
        self.seat = int(rng.integers(n))
        self.players: list[Agent | None] = [None] * n
        if self.rules.teams:
            foe = self.pool.sample()
            for s in range(n):
                if s != self.seat:
                    self.players[s] = self.partner if s % 2 == self.seat % 2 else foe
        else:
            for s in range(n):
                if s != self.seat:
                    self.players[s] = self.pool.sample()
        self._advance()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        state = self.state
        if state is None or state.game_over:
            raise RuntimeError("step() called before reset() or after the game ended")
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action[()]
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action {action!r}: an action is an integer 0..139 (one of "
                             f"the legal ones now: {list(self._legal)})")
        action = int(action)
        if action not in self._legal:
            return self._obs(), -2.0 * self.win_reward, True, False, \
                {"illegal_action": action, "legal": list(self._legal),
                 "action_mask": np.zeros(N_ACTIONS, dtype=bool)}
        before = self._margin()
        state.apply(action)
        self._advance()
        reward = self.margin_reward * (self._margin() - before) / self.rules.target
        info: dict[str, Any] = {"action_mask": self.action_masks()}
        if state.game_over:
            mine = self.rules.side_of(self.seat)
            if state.winner is not None:
                won = state.winner == mine
                reward += self.win_reward if won else -self.win_reward / (self.rules.n_sides - 1)
                info["won"] = won
            info["margin"] = self._margin()
        return self._obs(), float(reward), state.game_over and not state.truncated, \
            state.truncated, info

    def action_masks(self) -> np.ndarray:
        return legal_mask(self._legal).astype(bool)

    # ------------------------------------------------------------------ internals
    def _advance(self) -> None:
        """Play the other seats (and deal new hands) until the learner must act."""
        game = self.game
        advance(game, self.players, self.seat, skip_forced=True)  # forced moves: no need to ask
        self._legal = [] if game.game_over else game.legal_actions()

    def _obs(self) -> np.ndarray:
        """The observation, followed by the action view's rows flattened when there is one."""
        obs = observe(self.game, self.seat, self._legal)
        if self.action_view == "raw":
            return obs
        view = SeatView.of(self.game, self.seat)
        if self.game.game_over:  # no move is left: the rows are zeros
            view = dataclasses.replace(view, legal=())
        return np.concatenate([obs, action_view_features(view, self.action_view).ravel()])

    @property
    def game(self) -> GameState:
        """The game in progress (after ``reset()``)."""
        if self.state is None:
            raise RuntimeError("call reset() first")
        return self.state

    def _margin(self) -> float:
        scores, mine = self.game.scores, self.rules.side_of(self.seat)
        others = [s for i, s in enumerate(scores) if i != mine]
        return scores[mine] - sum(others) / len(others)
