"""All Fives as a PettingZoo AEC environment: ``allfives_v1`` (``allfives_v0`` is kept, see
the version history).

A thin adapter over :class:`allfives_env.game.engine.GameState`: the engine holds the rules, the
env turns them into spaces, rewards and the AEC turn protocol. Made by::

    import allfives_env, pettingzoo
    env = allfives_env.env(players=4, reward="points")
    env = allfives_env.raw_env("five_up", players=3)           # the class itself
    env = pettingzoo.make("aec", "allfives_v1", players=3)     # registry (after the import)
    par = pettingzoo.make("parallel", "allfives_v1", players=3)  # or allfives_env.parallel_env

``env()`` and ``raw_env()`` build the same class. What PettingZoo's ``env()`` wrappers add
(``OrderEnforcingWrapper``, ``AssertOutOfBoundsWrapper``, ``TerminateIllegalWrapper``) is
built in, at no cost per step: using the env before ``reset()`` (or ``step``/``last`` after
every agent was stepped out) raises :class:`ResetNeededError` (an ``AttributeError`` and a
``RuntimeError``), an illegal action ends the game with -1 for the offender and a warning
(``illegal_action="raise"`` raises ``ValueError`` instead), and ``unwrapped`` is the env
itself.

=====================  =================================================================
Agents                 ``player_0 .. player_{n-1}``, n = ``players`` (2, 3 or 4)
Actions                ``Discrete(140)``: ``tile * 5 + end`` (see :mod:`allfives_env.game.tiles`),
                       the same for every seat count
Observation            ``Dict(observation=Box(-2, high, (386,), float32),
                       action_mask=Box(0, 1, (140,), int8))``, the same for every agent
                       and for 2, 3 and 4 seats
Observation layout     ``allfives-obs/1`` (:mod:`allfives_env.game.observation`), seat-relative
State (``state()``)    ``Box(-2, 2.8, (311,), float32)``: perfect information, absolute seats
                       (:func:`allfives_env.game.observation.encode_state`)
Render modes           ``ansi`` (text), ``rgb_array`` (picture), ``human`` (prints the text);
                       without one ``render()`` warns and returns ``None``
=====================  =================================================================

Observation
-----------
``observation`` is :func:`allfives_env.game.observation.observe` for the seat (the layout's
version is ``OBS_LAYOUT_ID``; its sections and their sizes are listed there): the seat's own
hand, every tile played and by whom, the layout's open ends, hand sizes, boneyard size, the
numbers each seat is known to lack, scores, partners, the points each legal action scores
now, and the rules that matter. Slot 0 of every per-seat block is the observing seat, then
the others in turn order; partners are marked. Nothing about other hands or the boneyard
order. ``action_mask`` is 1 for the legal actions of the agent to act and all 0 for every
other agent and after the episode ended. Forced draws and passes are resolved inside the
env, so the agent to act always has at least one legal action.

State
-----
``state()`` is for centralized critics and sees everything, in absolute seats (slots past the
seat count are 0): every hand (4 x 28), the boneyard's tiles (28), who played which tile
(4 x 28), the layout's ``arms``, ``spinner``, ``lead`` and open-end total / 60 as in the
observation (45), per seat its side's score / target clipped to [-2, 2] and its tiles / 10
(4 + 4), the seat to act one-hot (4), drawable tiles / 28 and tiles played / 28 (2).

Rewards (option ``reward``)
---------------------------
``win`` (default)
    0 on every step but the last. When the game is won, each seat of the winning side gets
    +1. With two sides (2 seats, or 4 seats in teams) each losing seat gets -1; with three
    or four individual seats the losers share -1 (-1/2 each with 3 seats, -1/3 with 4), so
    the rewards are zero-sum over sides. A truncated game (``max_hands``) gives 0 to all.
``points``
    After each step, side ``i``'s score change ``d_i`` (points in play and end-of-hand
    scoring alike) becomes ``(d_i - mean(d)) / target`` for every seat of side ``i``:
    zero-sum over sides, and a game sums to ``(score_i - mean(scores)) / target``.

``rewards`` holds what the last ``step()`` produced, for every live agent;
``_cumulative_rewards`` (what ``last()`` returns) adds them up since each agent last acted
(the standard AEC rule, reset when the agent acts).

Episode end (option ``episode``)
--------------------------------
``game`` (default): the episode is one game, hands dealt one after another inside the env;
it ends when a side wins (``terminations`` all True) or at ``max_hands`` (``truncations``
all True). ``hand``: the episode is one hand, end-of-hand scoring included; with
``reward="win"`` the side with the most points after it wins (a tie at the top: 0 for all;
a side that wins the game at once in the hand wins). After the end every agent is stepped
once with ``None`` and removed, as PettingZoo requires.

Illegal actions (option ``illegal_action``)
-------------------------------------------
``lose`` (v1's default; PettingZoo's classic-games convention, as its
``TerminateIllegalWrapper``): a legal-range action outside the mask ends the game: the
offender gets -1, the others 0, every agent terminates, ``infos[offender]["illegal_action"]``
holds the action, and ``gymnasium.logger.warn`` (a ``UserWarning``) says so (and, once per
env, when it comes in a game's first moves: a learner that ignores the mask, such as
Tianshou's unmasked ``collect(random=True)``, gathers one-move games). ``raise`` (v0's
default; for debugging): ``step()`` raises ``ValueError`` naming the action and the legal
ones, and changes nothing. An action that is not an integer in ``0..139`` always raises
``ValueError``.

Options
-------
``raw_env(preset="all_fives", *, rules=None, reward="win", episode="game",
illegal_action="lose", render_mode=None, action_view="raw", **rule_overrides)``: ``preset`` and
``rule_overrides`` (``players``, ``teams``, ``target``, ... as docs/rules.md) go to
:func:`allfives_env.game.rules.make_rules`; or pass a ready ``rules`` object instead.
``action_view`` (``"raw"``, ``"facts"``, ``"heuristic"``; :mod:`allfives_env.envs.action_views`):
with a view other than ``raw`` the observation dict also holds ``"action_features"``,
``Box((140, F), float32)``, the view's row per legal action (zero rows elsewhere).
``reset(seed=None, options=None)``: ``seed`` (an int >= 0, numpy integers included, or
``None``) seeds the deals; any other seed (``1.5``, ``"7"``, ``True``) raises one
``ValueError`` line; ``options`` is not used.

``observe(agent)`` and ``last()`` hand out fresh arrays on every call: a caller may change the
returned observation or mask in place without changing what the env returns next.

Version history
---------------
Any change of behaviour (rewards, illegal moves, observation, spaces, episode end) raises the
version; the old one is kept while it is in use (docs/environment.md).

* v0 (``allfives_env.allfives_v0``, registry id ``allfives-v0``; kept): initial release
  (observation layout ``allfives-obs/1``); an illegal action raises ``ValueError`` by default
  (``illegal_action="raise"``).
* v1 (``allfives_env.allfives_v1``, ``allfives-v1``; current, what ``allfives_env.env()``
  builds): an illegal action ends the game with -1 for the offender and a warning by default
  (``illegal_action="lose"``). Everything else is as v0.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from allfives_env.envs.action_views import (
    action_view_bounds,
    action_view_features,
    action_view_names,
    check_action_view,
)
from allfives_env.game.engine import GameState
from allfives_env.game.observation import (
    OBS_LAYOUT_ID,
    OBS_SIZE,
    OBS_VIEWS,
    STATE_SIZE,
    encode_state,
    observe,
)
from allfives_env.game.rules import Rules, make_rules
from allfives_env.game.seeding import check_seed
from allfives_env.game.tiles import N_ACTIONS, action_to_str
from allfives_env.game.view import SeatView

ENV_NAME = "allfives_v1"
REWARDS = ("win", "points")
EPISODES = ("game", "hand")
ILLEGAL_ACTIONS = ("lose", "raise")
RENDER_MODES = ("ansi", "rgb_array", "human")
STATE_HIGH = 2.8  # hand sizes / 10 can reach 2.7; scores are clipped to [-2, 2]
EARLY_MOVES = 10  # an illegal action this early in a game: once per env, the warning below
EARLY_ILLEGAL = (
    "an illegal action in the first moves of a game: with illegal_action='lose' it ends the "
    "game at once, so a learner that ignores action_mask (e.g. Tianshou's unmasked "
    "collect(random=True)) gathers one-move games; sample from the mask, or use "
    "illegal_action='raise' to find the caller (docs/environment.md)")


class ResetNeededError(AttributeError, RuntimeError):
    """The env was used before ``reset()`` (or after its episode was stepped out)."""


#: Attributes that exist only after reset(); touching one before raises ResetNeededError.
_AFTER_RESET = frozenset({
    "agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations",
    "truncations", "infos", "_legal", "_obs", "_over", "_dirty", "_skip_agent_selection",
})


def _obs_bounds() -> tuple[np.ndarray, np.ndarray]:
    low = np.zeros(OBS_SIZE, dtype=np.float32)
    high = np.ones(OBS_SIZE, dtype=np.float32)
    for name in ("scores", "lead_margin"):
        low[OBS_VIEWS[name]], high[OBS_VIEWS[name]] = -2.0, 2.0
    high[OBS_VIEWS["hand_sizes"]] = STATE_HIGH
    high[OBS_VIEWS["rules"]] = 2.0  # target / 500 is clipped to 2
    return low, high


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name}={value!r}: allowed values are {', '.join(map(repr, allowed))}")
    return value


class AllFivesEnv(AECEnv[str, dict[str, np.ndarray], int]):
    """The environment; :func:`env` and :data:`raw_env` build it. See the module docstring."""

    metadata = {
        "name": ENV_NAME,
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
        "observation_layout": OBS_LAYOUT_ID,
    }

    def __init__(self, preset: str = "all_fives", *, rules: Rules | None = None,
                 reward: str = "win", episode: str = "game", illegal_action: str = "lose",
                 render_mode: str | None = None, action_view: str = "raw",
                 **rule_overrides: Any) -> None:
        super().__init__()
        self.action_view = check_action_view(action_view)
        if rules is not None:
            if not isinstance(rules, Rules):
                raise ValueError(f"rules must be a Rules object (make_rules(...)), not {rules!r}")
            if rule_overrides or preset != "all_fives":
                raise ValueError("give either rules=Rules(...) or a preset and rule options, "
                                 "not both")
        self.rules = rules if rules is not None else make_rules(preset, **rule_overrides)
        self.reward_mode = _choice("reward", reward, REWARDS)
        self.episode = _choice("episode", episode, EPISODES)
        self.illegal_action = _choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        if render_mode is not None:
            _choice("render_mode", render_mode, RENDER_MODES)
        self.render_mode = render_mode
        n = self.rules.players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_seat = {a: i for i, a in enumerate(self.possible_agents)}
        low, high = _obs_bounds()
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (N_ACTIONS,), dtype=np.int8),
                **self._view_space(),
            }) for a in self.possible_agents
        }
        self.action_spaces: dict[str, spaces.Space] = {
            a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self.state_space = spaces.Box(-2.0, STATE_HIGH, (STATE_SIZE,), dtype=np.float32)
        self._side_seats = [[s for s in range(n) if self.rules.side_of(s) == side]
                            for side in range(self.rules.n_sides)]
        self._rng: np.random.Generator | None = None
        self._warned_early = False
        self.episode_seed: int | None = None
        self.game: GameState | None = None

    def __getattr__(self, name: str) -> Any:
        """Only reached for missing attributes, so the checks cost nothing once reset."""
        if name in _AFTER_RESET:
            raise ResetNeededError(f"{self}: call reset() first ({name} is set by reset; "
                                   "step, last and observe need it)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _need_game(self, what: str) -> GameState:
        if self.game is None:
            raise ResetNeededError(f"{self}: call reset() before {what}()")
        return self.game

    # ------------------------------------------------------------------ spaces
    def _view_space(self) -> dict[str, spaces.Box]:
        """``{"action_features": Box [140, F]}`` for an action view, else nothing."""
        if self.action_view == "raw":
            return {}
        return {"action_features": spaces.Box(*action_view_bounds(self.action_view),
                                              dtype=np.float32)}

    def _with_view(self, obs: dict[str, np.ndarray], seat: int) -> dict[str, np.ndarray]:
        """``obs`` plus the action-view rows of ``seat`` (to act; -1: all zero) when the env
        has a view."""
        if self.action_view != "raw":
            width = len(action_view_names(self.action_view))
            obs["action_features"] = (
                np.zeros((N_ACTIONS, width), np.float32) if seat < 0 else action_view_features(
                    SeatView.of(self._need_game("observe"), seat), self.action_view))
        return obs

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed = check_seed(seed)
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self.episode_seed = seed
        self.game = game = GameState(self.rules, self._rng)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self._dirty = False  # rewards holds nonzero values from the last step
        self._over = False
        self._legal = game.legal_actions()
        self._obs: dict[str, np.ndarray] | None = None
        self.agent_selection = self.possible_agents[game.current]

    # ------------------------------------------------------------------ observing
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation and mask, as new arrays (the caller may change them)."""
        if agent == self.agent_selection and not self._over:
            obs = self._obs
            if obs is None:
                legal = self._legal
                mask = bytearray(N_ACTIONS)
                for a in legal:
                    mask[a] = 1
                game = self.game
                assert game is not None  # reset() ran: the agents exist
                obs = self._obs = self._with_view(
                    {"observation": observe(game, game.current, legal),
                     "action_mask": np.frombuffer(mask, dtype=np.int8)}, game.current)
            return {k: v.copy() for k, v in obs.items()}  # the cache stays the env's
        seat = self.agent_seat.get(agent)
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}: agents are "
                             f"{', '.join(self.possible_agents)}")
        return self._with_view({"observation": observe(self._need_game("observe"), seat, []),
                                "action_mask": np.zeros(N_ACTIONS, dtype=np.int8)}, -1)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The standard AEC ``last()``; :class:`ResetNeededError` once every agent was
        stepped out (PettingZoo's own would raise ``KeyError``)."""
        if self._over and not self.agents:
            raise ResetNeededError(f"{self}: the episode is over and every agent was "
                                   "stepped out: call reset()")
        agent = self.agent_selection  # AECEnv.last, written out: it runs every step
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def state(self) -> np.ndarray:
        return encode_state(self._need_game("state"))

    # ------------------------------------------------------------------ stepping
    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self._over:
            if not self.agents:
                raise ResetNeededError(f"{self}: the episode is over and every agent "
                                       "was stepped out: call reset()")
            self._was_dead_step(action)
            return
        if action.__class__ is not int:
            action = self._as_int(action)
        if action not in self._legal:
            self._illegal(action)
            return
        game = self.game
        assert game is not None  # reset() ran: _over exists
        self._cumulative_rewards[agent] = 0.0
        points = self.reward_mode == "points"
        if points:
            before = game.scores[:]
        game.apply(action)
        if game.hand_over and not game.game_over and self.episode == "game":
            game.next_hand()
        rewards = self.rewards
        if game.hand_over:  # game over, or the hand of a hand episode
            self._set_rewards(self._final_rewards() if not points else self._points(before))
            self._end(game.truncated and self.episode == "game")
        else:
            if points and game.scores != before:
                self._set_rewards(self._points(before))
            elif self._dirty:
                for a in rewards:
                    rewards[a] = 0.0
                self._dirty = False
            self._legal = game.legal_actions()
            self.agent_selection = self.possible_agents[game.current]
        self._obs = None

    def _set_rewards(self, values: list[float]) -> None:
        """Per-seat rewards of this step into ``rewards``, added to ``_cumulative_rewards``."""
        rewards, cumulative = self.rewards, self._cumulative_rewards
        for a, r in zip(self.possible_agents, values, strict=True):
            rewards[a] = r
            cumulative[a] += r
        self._dirty = True

    def _points(self, before: list[int]) -> list[float]:
        game = self.game
        assert game is not None
        after, n_sides = game.scores, self.rules.n_sides
        delta = [after[i] - before[i] for i in range(n_sides)]
        mean = sum(delta) / n_sides
        target = self.rules.target
        return [(delta[self.rules.side_of(s)] - mean) / target for s in range(self.rules.players)]

    def _final_rewards(self) -> list[float]:
        """``win`` rewards at the end of the episode, per seat."""
        game = self.game
        assert game is not None  # reset() ran: _over exists
        winner = game.winner
        if not game.game_over:  # the end of a hand episode: the unique top side wins
            top = max(game.scores)
            leaders = [i for i, s in enumerate(game.scores) if s == top]
            winner = leaders[0] if len(leaders) == 1 else None
        out = [0.0] * self.rules.players
        if winner is None or (game.truncated and self.episode == "game"):
            return out
        n_sides = self.rules.n_sides
        for side, seats in enumerate(self._side_seats):
            for s in seats:
                out[s] = 1.0 if side == winner else -1.0 / (n_sides - 1)
        return out

    def _end(self, truncated: bool) -> None:
        """Every agent terminates (or is truncated); dead steps follow."""
        self._over = True
        self._legal = []
        done = self.truncations if truncated else self.terminations
        for a in self.agents:
            done[a] = True
        nxt = (self.agent_seat[self.agent_selection] + 1) % self.rules.players
        self.agent_selection = self.possible_agents[nxt]

    # ------------------------------------------------------------------ bad actions
    def _as_int(self, action: Any) -> int:
        """An integer action from ``action`` (a Python or numpy integer, or a 0-d integer
        array: a scalar), or a ValueError saying what actions are (an array of one action,
        ``np.array([a])``, a list or a tuple are refused: one agent acts at a time)."""
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action[()]
        if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            return int(action)
        if isinstance(action, (np.ndarray, list, tuple)):
            what = f"a numpy array of shape {action.shape}" if isinstance(action, np.ndarray) \
                else f"a {type(action).__name__} of length {len(action)}"
            raise ValueError(f"the action is {what}, not a scalar: an action is one integer "
                             f"0..{N_ACTIONS - 1} (an int, a numpy integer or a 0-d integer "
                             f"array; Discrete({N_ACTIONS}))")
        if action is None:
            raise ValueError(f"{self.agent_selection} is to act: step() needs an action, an "
                             f"integer 0..{N_ACTIONS - 1}, not None")
        raise ValueError(f"action {action!r} ({type(action).__name__}) is not an integer: "
                         f"actions are integers 0..{N_ACTIONS - 1} (Discrete({N_ACTIONS}))")

    def _illegal(self, action: int) -> None:
        agent = self.agent_selection
        if not 0 <= action < N_ACTIONS:
            raise ValueError(f"action {action} is out of range for {agent}: actions are "
                             f"integers 0..{N_ACTIONS - 1} (Discrete({N_ACTIONS}))")
        if self.illegal_action == "raise":
            shown = ", ".join(f"{a} ({action_to_str(a)})" for a in self._legal)
            raise ValueError(f"illegal action {action} ({action_to_str(action)}) for {agent}; "
                             f"legal actions: {shown}")
        game = self.game
        if game is not None and game.hand_index == 0 and game.n_played < EARLY_MOVES \
                and not self._warned_early:  # once per env: a learner ignoring the mask
            self._warned_early = True
            gymnasium.logger.warn(EARLY_ILLEGAL)
        gymnasium.logger.warn(f"{self}: illegal action {action} ({action_to_str(action)}) "
                              f"by {agent}: the game ends, {agent} loses (-1); the legal "
                              "actions are in observe(agent)['action_mask']")
        self._cumulative_rewards[agent] = 0.0
        self._set_rewards([-1.0 if a == agent else 0.0 for a in self.possible_agents])
        self.infos[agent] = {"illegal_action": action}
        self._end(False)
        self._obs = None

    # ------------------------------------------------------------------ rendering
    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:  # PettingZoo's convention: warn, render nothing
            gymnasium.logger.warn("render() without a render_mode renders nothing: make the "
                                  f"env with render_mode one of {', '.join(RENDER_MODES)}")
            return None
        from allfives_env.rendering.render import render_ansi
        from allfives_env.rendering.render_image import render_rgb

        game = self._need_game("render")
        viewer = None if self._over else game.current
        if self.render_mode == "rgb_array":
            return render_rgb(game, viewer)
        text = render_ansi(game, viewer)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: rendering opens no window."""

    # ------------------------------------------------------------------ records
    def record(self, agents: list[str] | None = None) -> dict[str, Any]:
        """The game so far as an ``allfives-record/1`` dict (finished hands only)."""
        from allfives_env.records.record import game_record

        return game_record(self._need_game("record"), self.episode_seed, agents)


raw_env = AllFivesEnv


def env(preset: str = "all_fives", **kwargs: Any) -> AllFivesEnv:
    """The environment (see the module docstring for the options). The same class as
    :data:`raw_env`: the checks PettingZoo's ``env()`` wrappers add are built in."""
    return AllFivesEnv(preset, **kwargs)


def parallel_env(preset: str = "all_fives", **kwargs: Any) -> ParallelEnv:
    """The env as a PettingZoo ``ParallelEnv`` (``turn_based_aec_to_parallel`` of
    :func:`env`, the same options): ``step`` takes a dict of actions and plays only the one of
    the agent to act, named in every live agent's ``infos[agent]["active_agent"]``; the other
    agents' actions are ignored and their action masks are all 0."""
    return turn_based_aec_to_parallel(env(preset, **kwargs))


#: Every version's PettingZoo name and the ``module:attribute`` that builds it.
VERSIONS = {"allfives_v0": "allfives_env.allfives_v0:env", ENV_NAME: f"{__name__}:env"}


def register() -> None:
    """Register every version with PettingZoo's registries (ids ``allfives-v0``,
    ``allfives-v1``), so that ``pettingzoo.make("aec", "allfives_v1", **options)`` builds
    :func:`env`, ``pettingzoo.make("parallel", "allfives_v1", ...)`` :func:`parallel_env`,
    and ``"allfives"`` alone the newest. Called by ``import allfives_env``; a no-op
    when already registered or when PettingZoo has no registry (before 1.27)."""
    import pettingzoo

    if not hasattr(pettingzoo, "register"):
        return
    for name, entry_point in VERSIONS.items():
        if pettingzoo.EnvSpec(name).id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", name, entry_point=entry_point)
        if pettingzoo.EnvSpec(name).id not in pettingzoo.parallel_registry:
            module = entry_point.rpartition(":")[0]
            pettingzoo.register("parallel", name, entry_point=f"{module}:parallel_env")


class _CallableModule(types.ModuleType):
    """``allfives_env.env`` is this module (so ``import allfives_env.env as m`` gives it) and
    calling it builds the checked env: ``allfives_env.env(players=3)`` is :func:`env`."""

    def __call__(self, preset: str = "all_fives", **kwargs: Any) -> AllFivesEnv:
        return env(preset, **kwargs)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickle (and cloudpickle) the module by name, as plain modules are, so env
        factories that use it travel to subprocesses and Ray workers."""
        return importlib.import_module, (self.__name__,)


sys.modules[__name__].__class__ = _CallableModule
