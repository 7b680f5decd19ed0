"""A plain single-agent gymnasium wrapper of ``allfives_v1``, written as a user of the
ecosystem would write one (no masks handled: the env's own illegal-action rule applies).
Seat 0 learns; the other seats play their first legal action. Used by the ecosystem tests."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

import allfives_env


class PlainSingleAgent(gym.Env):
    """``observation`` only (a Box), ``Discrete(140)`` actions, seat 0's cumulative reward."""

    def __init__(self, players: int = 2, target: int = 61) -> None:
        self.aec = allfives_env.env(players=players, target=target)
        space = self.aec.observation_space("player_0")
        self.observation_space = space["observation"]
        self.action_space = self.aec.action_space("player_0")

    def _others(self) -> None:
        aec = self.aec
        while aec.agents and not aec.terminations[aec.agent_selection] \
                and not aec.truncations[aec.agent_selection] and aec.agent_selection != "player_0":
            aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))

    def _result(self) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, term, trunc, _ = self.aec.last()
        if term or trunc:
            reward = float(self.aec._cumulative_rewards["player_0"])
        return obs["observation"], float(reward), bool(term), bool(trunc), {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.aec.reset(seed=seed)
        self._others()
        return self._result()[0], {}

    def step(self, action: Any):
        self.aec.step(int(action))
        self._others()
        return self._result()


def plain_factory() -> PlainSingleAgent:
    return PlainSingleAgent()
