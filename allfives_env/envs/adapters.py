"""Small adapters between ``allfives_v1`` and other multi-agent RL libraries (torch-free).

Tianshou 2.x (``tianshou.env.PettingZooEnv``) and TorchRL (``PettingZooWrapper(...,
use_mask=True)``) take :func:`allfives_env.env` unchanged. Tianshou's multi-agent algorithms
learn each seat from the rows in which it acted, so a seat that did not make the last move
never sees its final reward: :class:`SettleTurns` pays every seat on its own turns (a
settling turn at the end), ``PettingZooEnv(SettleTurns(allfives_env.env(players=2)))``.
Ray RLlib's action-masking module (``ActionMaskingTorchRLModule``) wants the observation
under the key ``"observations"`` (plural); :class:`RLlibObservation` renames that key and
changes nothing else::

    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from allfives_env.envs.adapters import rllib_aec_env
    env = PettingZooEnv(rllib_aec_env(players=4, reward="points"))

:class:`EpisodeLog` goes under any library's wrapper and keeps, per finished game, what the env
itself paid each agent, the final scores and winner, and how many actions broke the mask: a
check that the library saw the same rewards and honoured the masks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

RLLIB_OBS_KEY = "observations"
RLLIB_MASK_KEY = "action_mask"


class RLlibObservation(BaseWrapper):
    """``{"observation", "action_mask"}`` -> ``{"observations", "action_mask"}`` (the same
    arrays, the int8 mask included). Everything else (agents, rewards, turns, errors for bad
    actions) is the wrapped env's own."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._spaces: dict[str, spaces.Dict] = {}
        for agent in env.possible_agents:
            inner = env.observation_space(agent)
            if not isinstance(inner, spaces.Dict) or set(inner.spaces) != {
                    "observation", "action_mask"}:
                raise ValueError(f"RLlibObservation wraps an env whose observations are "
                                 f"Dict(observation, action_mask); {agent} has {inner}")
            self._spaces[agent] = spaces.Dict({
                RLLIB_OBS_KEY: inner["observation"], RLLIB_MASK_KEY: inner["action_mask"]})

    def observation_space(self, agent: str) -> spaces.Space:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {RLLIB_OBS_KEY: obs["observation"], RLLIB_MASK_KEY: obs["action_mask"]}

    def __str__(self) -> str:
        return f"RLlibObservation<{self.env}>"


def rllib_aec_env(preset: str = "all_fives", **kwargs: Any) -> RLlibObservation:
    """``allfives_env.env(preset, **kwargs)`` with RLlib's observation keys (see the module
    docstring); ``kwargs`` are the env's options and rule overrides."""
    from allfives_env.env import env

    return RLlibObservation(env(preset, **kwargs))


class EpisodeLog(BaseWrapper):
    """Records every finished episode in :attr:`episodes` (a list of dicts): ``returns``
    (agent -> the sum of the env's ``rewards`` over the episode), ``steps`` (actions taken),
    ``illegal`` (actions outside the acting agent's mask), ``scores``, ``winner`` and
    ``truncated`` (from the game). Changes nothing the library sees."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self.episodes: list[dict[str, Any]] = []
        self._returns: dict[str, float] = {}
        self._steps = self._illegal = 0
        self._open = False

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._returns = dict.fromkeys(self.env.possible_agents, 0.0)
        self._steps = self._illegal = 0
        self._open = True

    def step(self, action: Any) -> None:
        agent = self.env.agent_selection
        live = not (self.env.terminations[agent] or self.env.truncations[agent])
        if live:
            self._steps += 1
            if not _allowed(action, self.env.observe(agent)["action_mask"]):
                self._illegal += 1
        self.env.step(action)
        for a, r in self.env.rewards.items():
            self._returns[a] += float(r)
        if self._open and live and self.env.agents and all(
                self.env.terminations[a] or self.env.truncations[a] for a in self.env.agents):
            self._close()

    def _close(self) -> None:
        game = self.env.unwrapped.game
        self.episodes.append({
            "returns": dict(self._returns), "steps": self._steps, "illegal": self._illegal,
            "scores": list(game.scores), "winner": game.winner,
            "truncated": bool(game.truncated),
        })
        self._open = False

    def __str__(self) -> str:
        return f"EpisodeLog<{self.env}>"


def _allowed(action: Any, mask: np.ndarray) -> bool:
    """``action`` is one integer whose mask entry is 1."""
    flat = np.asarray(action if action is not None else [], dtype=object).reshape(-1)
    if flat.size != 1 or not isinstance(flat[0], (int, np.integer)) \
            or isinstance(flat[0], (bool, np.bool_)):
        return False
    a = int(flat[0])
    return 0 <= a < len(mask) and bool(mask[a])


SETTLE_ACTION = 0


class SettleTurns(BaseWrapper):
    """Every reward reaches its seat on one of that seat's own turns, for libraries that keep
    only the transitions in which an agent acted (Tianshou's ``PettingZooEnv`` with
    ``MultiAgentOffPolicyAlgorithm``: each seat learns from its own rows only)::

        from tianshou.env import PettingZooEnv
        from allfives_env.envs.adapters import SettleTurns
        env = PettingZooEnv(SettleTurns(allfives_env.env(players=2)))

    Without it, a seat that did not make the last move never sees its final reward (the -1
    of a lost game is paid on the winner's row). With it:

    * ``rewards`` after a step pay the seat that acted everything it is owed (what the env
      paid it on this step and on the other seats' steps since its last turn); the other
      seats get 0 now and are paid on their next turn.
    * When the game ends, every seat but the last mover gets one *settling turn* in turn
      order: its final observation with a mask of one legal action (``SETTLE_ACTION``, 0;
      the action sent is ignored), and the step pays it what it is owed (e.g. its -1). The
      episode ends (``terminations`` or ``truncations`` all True, as the env's) after the
      last settling turn.

    So each seat's rewards summed over its own transitions equal what the env paid it.
    After the end, steps go on as the env's own dead steps (``None``)."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._owed: dict[str, float] = {}
        self._settle: list[str] = []
        self._end: str | None = None  # "terminated" or "truncated" once the game ended

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._owed = dict.fromkeys(self.env.possible_agents, 0.0)
        self._settle, self._end = [], None
        self._mirror()

    def _mirror(self, paid: dict[str, float] | None = None) -> None:
        """Turn, agents and flags from the env (during play), rewards as ``paid``."""
        env = self.env
        self.agents = env.agents[:]
        self.agent_selection = self._settle[0] if self._settle else env.agent_selection
        self.rewards = {a: (paid or {}).get(a, 0.0) for a in self.agents}
        self._cumulative_rewards = dict(self.rewards)
        self.infos = env.infos
        if self._end is not None:  # the env's flags wait for the last settling turn
            over = not self._settle
            self.terminations = dict.fromkeys(self.agents, over and self._end == "terminated")
            self.truncations = dict.fromkeys(self.agents, over and self._end == "truncated")
        else:
            self.terminations, self.truncations = env.terminations, env.truncations

    def step(self, action: Any) -> None:
        if self._settle:
            agent = self._settle.pop(0)
            paid = {agent: self._owed[agent]}
            self._owed[agent] = 0.0
            self._mirror(paid)
            return
        if self._end is not None:  # after the settling turns: the env's dead steps
            self.env.step(action)
            self._mirror()
            return
        env = self.env
        agent = env.agent_selection
        env.step(action)
        for a, r in env.rewards.items():
            self._owed[a] += float(r)
        paid = {agent: self._owed[agent]}
        self._owed[agent] = 0.0
        if env.agents and all(env.terminations[a] or env.truncations[a] for a in env.agents):
            order = env.possible_agents
            i = order.index(agent)
            self._settle = order[i + 1:] + order[:i]
            self._end = "terminated" if any(env.terminations.values()) else "truncated"
        self._mirror(paid)

    def observe(self, agent: str) -> Any:
        obs = self.env.observe(agent)
        if self._settle and agent == self._settle[0]:
            mask = np.zeros_like(obs["action_mask"])
            mask[SETTLE_ACTION] = 1
            obs = {**obs, "action_mask": mask}
        return obs

    def __str__(self) -> str:
        return f"SettleTurns<{self.env}>"
