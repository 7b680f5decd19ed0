"""The learner's seat against a pool, as a Gymnasium ``VectorEnv`` over scalar envs
(:class:`ScalarLoopVectorEnv`).

The same interface as the batched :class:`allfives_train.games.vector_env.AllFivesVectorEnv` (which
steps
all games in one compiled call), built from ``num_envs`` :class:`AllFivesSingleAgentEnv`
stepped one after another in Python. It is the fallback when the batched engine (numba) is
not available, and the reference the batched one is checked against.

* ``reset()`` / ``step(actions)`` return ``obs [N, OBS_SIZE] float32`` (with
  ``action_view`` the view's rows follow, ``[N, OBS_SIZE + 140 F]``, as in the batched env);
  ``infos["action_mask"]`` (and ``action_masks()``) is ``[N, N_ACTIONS] bool``.
* Same-step autoreset: an env whose game ended in this step returns the first observation of
  its next game; the last one is in ``infos["final_obs"]`` (object array, mask
  ``infos["_final_obs"]``), ``infos["final_info"]`` has ``won``, ``margin`` and ``seat``
  of the games that ended and ``infos["episode"]`` their return ``r`` and length ``l``.
* Actions and seeds as the batched env: ``[N]`` integers in ``0..139`` (a masked-out one ends
  that game as a loss; floats, bools, strings, another shape or a value out of range raise one
  ``ValueError`` line before any game moves); seeds are ints >= 0 or ``None``.
* ``set_self(arrays)`` gives the ``self`` opponents the learner's weights
  (:meth:`NumpyPolicy.arrays` format); ``add_snapshot(arrays, name)`` adds a frozen copy to
  the ``snapshots`` entries.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from allfives_env.batched_engine.games import as_actions
from allfives_env.game.rules import Rules
from allfives_env.game.seeding import check_seed, first_seed
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.games.single_agent import AllFivesSingleAgentEnv


class ScalarLoopVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games of the learner's seat against ``opponents`` (scalar envs inside)."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, rules: Rules, num_envs: int, opponents: list[dict[str, Any]],
                 seed: int | None = None, margin_reward: float = 1.0,
                 win_reward: float = 1.0, partner: str = "self", snapshot_keep: int = 10,
                 action_view: str = "raw") -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs={num_envs}: must be >= 1")
        seed = check_seed(seed)
        base = np.random.SeedSequence(seed).spawn(num_envs)
        self.envs = [AllFivesSingleAgentEnv(rules, opponents, partner, margin_reward, win_reward,
                                            snapshot_keep, seed=int(s.generate_state(1)[0]),
                                            action_view=action_view)
                     for s in base]
        self.rules, self.num_envs = rules, num_envs
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        width = int(np.prod(self.single_observation_space.shape or (0,)))
        self._obs = np.zeros((num_envs, width), np.float32)
        self._mask = np.zeros((num_envs, N_ACTIONS), bool)
        self._ret, self._len = np.zeros(num_envs), np.zeros(num_envs, np.int64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        seeds: list[int | None] = [None] * self.num_envs
        seed = first_seed(seed)
        if seed is not None:
            seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(self.num_envs)]
        for i, env in enumerate(self.envs):
            self._obs[i], _ = env.reset(seed=seeds[i])
            self._ret[i], self._len[i] = 0.0, 0
            self._mask[i] = env.action_masks()
        return self._obs.copy(), {"action_mask": self._mask.copy()}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                 np.ndarray, dict[str, Any]]:
        n = self.num_envs
        acts = as_actions(actions, n, low=0)  # one ValueError line before any game moves
        rewards = np.zeros(n)
        term, trunc = np.zeros(n, bool), np.zeros(n, bool)
        final_obs = np.full(n, None, dtype=object)
        won, margin, seat = np.zeros(n, bool), np.zeros(n), np.zeros(n, np.int64)
        ret, length = np.zeros(n), np.zeros(n, np.int64)
        for i, env in enumerate(self.envs):
            obs, rewards[i], term[i], trunc[i], info = env.step(int(acts[i]))
            self._ret[i] += rewards[i]
            self._len[i] += 1
            if term[i] or trunc[i]:
                final_obs[i], won[i], seat[i] = obs, info.get("won", False), env.seat
                margin[i], ret[i], length[i] = info.get("margin", 0.0), self._ret[i], self._len[i]
                self._ret[i], self._len[i] = 0.0, 0
                obs, _ = env.reset()
            self._obs[i] = obs
            self._mask[i] = env.action_masks()
        infos: dict[str, Any] = {"action_mask": self._mask.copy()}
        ended = term | trunc
        if ended.any():
            infos.update(final_obs=final_obs, _final_obs=ended, _final_info=ended.copy(),
                         final_info={"won": won, "_won": ended.copy(), "margin": margin,
                                     "_margin": ended.copy(), "seat": seat,
                                     "_seat": ended.copy()},
                         episode={"r": ret, "l": length, "_r": ended.copy(),
                                  "_l": ended.copy()},
                         _episode=ended.copy())
        return self._obs.copy(), rewards, term, trunc, infos

    def action_masks(self) -> np.ndarray:
        return self._mask.copy()

    def set_self(self, arrays: dict[str, np.ndarray]) -> None:
        for env in self.envs:
            env.set_self(arrays)

    def add_snapshot(self, arrays: dict[str, np.ndarray], name: str) -> None:
        for env in self.envs:
            env.add_snapshot(arrays, name)

    def close_extras(self, **kwargs: Any) -> None:
        self.envs = []
