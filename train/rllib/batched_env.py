"""The batched games as RLlib's single-agent env runners step them (``engine: batched``).

RLlib's ``SingleAgentEnvRunner`` builds its env with ``gym.make_vec(...,
vectorization_mode="vector_entry_point")`` from the registered creator, so one env runner
steps ``num_envs_per_env_runner`` games of
:class:`allfives_train.games.vector_env.AllFivesVectorEnv` (the
batched engine, the opponent pool, the per-action features) in one call. Two adaptations:

* observations are RLlib's action-masking dict, ``{"observations": obs and per-action
  features, "action_mask": [140] 0/1}``, so the module reads the mask from its input;
* autoreset is ``NEXT_STEP``, as RLlib's runner expects: a game that ends returns its last
  observation with ``terminated``; the next step returns the new game's first observation
  (reward 0, the action sent for it ignored), which the runner takes as the reset of a new
  episode. The batched env itself replaces a game in the same step; the game it started is
  held back one step (:meth:`AllFivesVectorEnv.step`'s ``skip``).

The learner's ``self`` and ``snapshots`` opponents get their weights through :meth:`set_self`
and :meth:`add_snapshot` (called on every env runner by :mod:`allfives_train.rllib.batched`).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from allfives_env.game.tiles import N_ACTIONS
from allfives_train.games.vector_env import AllFivesVectorEnv


class RLlibVectorEnv(gym.vector.VectorEnv):
    """:class:`AllFivesVectorEnv` with dict observations and next-step autoreset."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, inner: AllFivesVectorEnv) -> None:
        self.inner = inner
        self.num_envs = inner.num_envs
        self.single_observation_space = gym.spaces.Dict({
            "observations": inner.single_observation_space,
            "action_mask": gym.spaces.Box(0.0, 1.0, (N_ACTIONS,), np.float32)})
        self.single_action_space = inner.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = inner.action_space
        self.pending = np.zeros(self.num_envs, dtype=bool)

    def set_self(self, arrays: dict[str, np.ndarray]) -> None:
        self.inner.set_self(arrays)

    def add_snapshot(self, arrays: dict[str, np.ndarray], name: str) -> None:
        self.inner.add_snapshot(arrays, name)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, infos = self.inner.reset(seed=seed, options=options)
        self.pending[:] = False
        return _as_dict(obs, infos["action_mask"]), {}

    def step(self, actions: np.ndarray
             ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray,
                        dict[str, Any]]:
        obs, reward, term, trunc, infos = self.inner.step(actions, skip=self.pending)
        mask = infos["action_mask"]
        done = term | trunc
        if done.any():  # the last observation of each game that ended; its new game waits
            rows = np.flatnonzero(done)
            obs = obs.copy()
            obs[rows] = np.stack(infos["final_obs"][rows])
            mask = mask.copy()
            mask[rows] = True  # no move is asked in a finished game; any action is ignored
        self.pending = done
        return _as_dict(obs, mask), reward, term, trunc, {}

    def close_extras(self, **kwargs: Any) -> None:
        self.inner.close()


def _as_dict(obs: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    return {"observations": obs, "action_mask": mask.astype(np.float32)}
