"""The RLlib env with an opponent pool and the SB3 trainer's shaped reward (``reward:
shaped`` or a non-empty ``opponents`` list).

Each game the learning side is drawn uniformly; its seats are agents ``player_<seat>``
(played by ``main``). The other sides share one draw from the ``opponents`` pool (as
``allfives_train.config.TrainConfig.opponents``): a fixed agent id (``greedy``, ``heuristic``,
``ckpt:<path>`` ...) plays its seats inside :meth:`AllFivesTable.step`, unseen by RLlib;
``self`` exposes them as ``player_<seat>`` too (``main`` plays and learns them); ``snapshots``
exposes them as ``opponent_<seat>``, which the policy mapping gives to a frozen snapshot.
With an empty pool every seat is ``player_<seat>`` and the ``policy`` mapping decides.

Reward of an agent, paid with its next observation (or at the end): ``margin_reward *``
the change of (own side's score minus the mean of the other sides') / target since its last
decision, plus ``+win_reward`` for a won game and ``-win_reward / (sides - 1)`` for a lost
one (0 when truncated): the same as
:class:`allfives_train.games.single_agent.AllFivesSingleAgentEnv`.
Observations are those of ``allfives_env.envs.adapters.rllib_aec_env`` (``observations``,
``action_mask``), so checkpoints play as ``rllib:<path>`` agents unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from allfives_agents.base import Agent, make_agent
from allfives_env.envs.adapters import RLLIB_MASK_KEY, RLLIB_OBS_KEY, rllib_aec_env
from allfives_env.game.engine import GameState
from allfives_env.game.match import advance, legal_mask, new_game
from allfives_env.game.observation import observe
from allfives_env.game.rules import make_rules
from allfives_train.games.opponents import SELF, SNAPSHOTS

LEARNER, OPPONENT = "player", "opponent"
ENV_KEYS = ("preset", "opponents", "margin_reward", "win_reward", "seed")


class AllFivesTable(MultiAgentEnv):
    """A whole game of All Fives; some seats may be played by bots inside ``step()``."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        preset = config.get("preset", "all_fives")
        entries = list(config.get("opponents") or [])
        self.margin_reward = float(config.get("margin_reward", 1.0))
        self.win_reward = float(config.get("win_reward", 1.0))
        seed = config.get("seed")
        rule_options = {k: v for k, v in config.items() if k not in ENV_KEYS}
        self.rules = make_rules(preset, **rule_options)
        n = self.rules.players
        space = rllib_aec_env(preset, **rule_options)
        self.possible_agents: list[Any] = [f"{LEARNER}_{s}" for s in range(n)] + \
            [f"{OPPONENT}_{s}" for s in range(n)]
        self.observation_spaces = {a: space.observation_space("player_0")
                                   for a in self.possible_agents}
        self.action_spaces = {a: space.action_space("player_0") for a in self.possible_agents}
        self.agents: list[Any] = []
        self.ids = [str(e["agent"]) for e in entries]
        weights = np.array([float(e.get("weight", 1.0)) for e in entries])
        self.probs = weights / weights.sum() if entries else weights
        self._rng = np.random.default_rng(seed)
        bot_seed = int(self._rng.integers(2**31))
        self.bots: dict[str, Agent] = {i: make_agent(i, bot_seed) for i in self.ids
                                       if i not in (SELF, SNAPSHOTS)}
        self.state: GameState | None = None

    @property
    def game(self) -> GameState:
        """The game in play (RuntimeError before the first ``reset()``)."""
        if self.state is None:
            raise RuntimeError("AllFivesTable: call reset() before step()")
        return self.state

    # ------------------------------------------------------------------ the table
    def _seat_players(self) -> tuple[list[str | None], list[Agent | None]]:
        """Per seat this game: its agent id (None: a bot plays it) and its bot."""
        n, side_of = self.rules.players, self.rules.side_of
        if not self.ids:
            return [f"{LEARNER}_{s}" for s in range(n)], [None] * n
        mine = int(self._rng.integers(self.rules.n_sides))
        choice = self.ids[int(self._rng.choice(len(self.ids), p=self.probs))]
        agents: list[str | None] = []
        bots: list[Agent | None] = []
        for s in range(n):
            if side_of(s) == mine or choice == SELF:
                agents.append(f"{LEARNER}_{s}")
                bots.append(None)
            elif choice == SNAPSHOTS:
                agents.append(f"{OPPONENT}_{s}")
                bots.append(None)
            else:
                agents.append(None)
                bots.append(self.bots[choice])
        return agents, bots

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = new_game(self.rules, int(self._rng.integers(2**32)), log=False)
        self.seat_agent, self.seat_bot = self._seat_players()
        self.agents = [a for a in self.seat_agent if a is not None]
        self._paid: dict[str, float] = {}  # agent -> its margin when last paid
        self._advance()
        obs = self._observe({self.game.current})
        self._pay(obs)  # starts its account: nothing is paid with a first observation
        return obs, {}

    def step(self, action_dict: dict[Any, Any]  # type: ignore[override]  # as Ray's own
             ) -> tuple[dict, dict, dict, dict, dict]:
        state = self.game
        seat = state.current
        action = int(action_dict[str(self.seat_agent[seat])])
        if action not in self._legal:
            raise ValueError(f"action {action} is illegal for seat {seat}; legal: {self._legal}")
        state.apply(action)
        self._advance()
        if not state.game_over:
            obs = self._observe({state.current})
            return obs, self._pay(obs), {"__all__": False}, {"__all__": False}, {}
        seats = {s for s, a in enumerate(self.seat_agent) if a is not None}
        obs = self._observe(seats)
        rewards = self._pay(obs)
        for agent in obs:
            rewards[agent] += self._win_reward(agent)
        done = {a: True for a in obs}
        over = {"__all__": True, **done}
        none = {"__all__": False, **{a: False for a in obs}}
        return (obs, rewards, none, over, {}) if state.truncated else \
            (obs, rewards, over, none, {})

    # ------------------------------------------------------------------ internals
    def _advance(self) -> None:
        """Deal on and let the bots play until an agent must act or the game is over: the
        one game loop (:func:`allfives_env.game.match.advance`; bots see their seat's view only)."""
        agents = {s for s, a in enumerate(self.seat_agent) if a is not None}
        advance(self.game, self.seat_bot, until_any=agents)
        self._legal = [] if self.game.game_over else self.game.legal_actions()

    def _observe(self, seats: set[int]) -> dict[str, dict[str, np.ndarray]]:
        """Each seat's observation; only the seat to act has legal actions in it."""
        out = {}
        for s in sorted(seats):
            legal = self._legal if s == self.game.current else []
            out[str(self.seat_agent[s])] = {RLLIB_OBS_KEY: observe(self.game, s, legal),
                                       RLLIB_MASK_KEY: legal_mask(legal)}
        return out

    def _margin(self, agent: str) -> float:
        scores, mine = self.game.scores, self.rules.side_of(int(agent.rsplit("_", 1)[1]))
        others = [x for i, x in enumerate(scores) if i != mine]
        return scores[mine] - sum(others) / len(others)

    def _pay(self, obs: dict[str, Any]) -> dict[str, float]:
        """Margin rewards since each observed agent's last payment (none on its first)."""
        out = {}
        for agent in obs:
            now = self._margin(agent)
            before = self._paid.get(agent, now)
            self._paid[agent] = now
            out[agent] = self.margin_reward * (now - before) / self.rules.target
        return out

    def _win_reward(self, agent: str) -> float:
        state = self.game
        if state.winner is None or state.truncated:
            return 0.0
        if state.winner == self.rules.side_of(int(agent.rsplit("_", 1)[1])):
            return self.win_reward
        return -self.win_reward / (self.rules.n_sides - 1)
