"""``engine: batched`` on RLlib: the fast path's method with RLlib as the trainer.

* the env runners step :class:`allfives_train.rllib.batched_env.RLlibVectorEnv` (the batched engine,
  ``num_envs_per_env_runner`` games per call, the learner's seat against the opponent pool);
* the RLModule is the fast path's per-action-feature actor and critic
  (:class:`allfives_train.algorithms.ppo_batched.net.ResidualActorCritic`: it starts at the
  heuristic's weights, or at
  ``init_from``'s actor), behind RLlib's PPO;
* after each iteration :class:`PoolWeights` gives the env runners' ``self`` opponents the new
  weights and, every ``snapshot_every`` iterations, a frozen snapshot;
* every checkpoint also holds the actor as a data-only ``policy.npz`` with a fast-path card
  (:func:`export_policy`), so ``ckpt:<checkpoint>`` plays it anywhere without trusting
  RLlib's pickles.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.ppo_torch_rl_module import PPOTorchRLModule
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.tune.registry import register_env

from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.config import TrainConfig
from allfives_train.rllib.algo import ppo_args, runner_args
from allfives_train.rllib.section import RLLIB
from allfives_train.sections import ACTOR, POOL

BATCHED_ENV_NAME = "allfives_batched"
#: the module id RLlib gives the one module of a single-agent run
MODULE = "default_policy"


def make_batched_env(env_config: dict[str, Any]) -> Any:
    """The env runner's vector env: ``num_envs`` batched games (RLlib adds ``num_envs``)."""
    from allfives_env.game.rules import make_rules
    from allfives_train.games.shards import per_action_inputs
    from allfives_train.games.vector_env import AllFivesVectorEnv
    from allfives_train.rllib.batched_env import RLlibVectorEnv

    c = dict(env_config)
    rules = make_rules(c["preset"], **c["rules"])
    seed = int(c["seed"]) * 1000 + int(c.get("worker_index", 0))
    inner = AllFivesVectorEnv(rules, int(c.get("num_envs", 1)), c["opponents"], seed=seed,
                              margin_reward=c["margin_reward"], win_reward=c["win_reward"],
                              snapshot_keep=c["snapshot_keep"],
                              **per_action_inputs(c.get("action_view"), int(c["features"] or 0)))
    return RLlibVectorEnv(inner)


def register_batched() -> str:
    register_env(BATCHED_ENV_NAME, make_batched_env)
    return BATCHED_ENV_NAME


class ActionFeatureModule(PPOTorchRLModule):
    """PPO's RLModule around the fast path's per-action-feature actor-critic: logits of the
    legal moves (the rest masked) and the critic's value, from the dict observation."""

    def setup(self) -> None:
        from allfives_train.algorithms.ppo_batched.net import actor_from, make_agent_net

        c: dict[str, Any] = dict(self.model_config or {})  # type: ignore[arg-type]
        self.net: Any
        if c.get("init_policy"):
            from allfives_agents.trained.checkpoint import load_checkpoint

            self.net = actor_from(load_checkpoint(c["init_policy"])[2])
        else:
            self.net = make_agent_net("action_features", OBS_SIZE, N_ACTIONS,
                                      list(c["net_arch"]), c.get("activation", "tanh"),
                                      "fp32", c.get("feature_temperature", 1.0),
                                      c.get("feature_start", "heuristic"), c["features"],
                                      c.get("action_view"))

    def _logits(self, batch: dict[str, Any]) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: self.net.logits(
            obs["observations"], obs["action_mask"] > 0.5)}

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._logits(batch)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._logits(batch)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._logits(batch)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        return self.net.value(batch[Columns.OBS]["observations"])

    def get_initial_state(self) -> dict[str, Any]:
        return {}


def module_config(cfg: TrainConfig) -> dict[str, Any]:
    actor = cfg.section(ACTOR)
    return {"net_arch": list(cfg.net_arch), "activation": cfg.activation,
            "features": actor.features, "init_policy": cfg.init_from,
            "feature_temperature": actor.feature_temperature,
            "feature_start": actor.feature_start, "action_view": actor.action_view}


def env_config(cfg: TrainConfig) -> dict[str, Any]:
    rules = cfg.game().rules
    return {"preset": rules.preset, "rules": rules.to_dict(), "seed": cfg.seed,
            "opponents": cfg.section(POOL).opponents,
            "margin_reward": cfg.margin_reward, "win_reward": cfg.win_reward,
            "snapshot_keep": cfg.section(RLLIB).snapshot_keep,
            "features": cfg.section(ACTOR).features,
            "action_view": cfg.section(ACTOR).action_view}


def build_batched_config(cfg: TrainConfig) -> PPOConfig:
    """PPO over the batched env runners with the per-action-feature module."""
    config = (
        PPOConfig()
        .environment(BATCHED_ENV_NAME, env_config=env_config(cfg), disable_env_checking=True)
        .framework("torch")
        .env_runners(**runner_args(cfg), gym_env_vectorize_mode="vector_entry_point")
        .learners(num_learners=cfg.section(RLLIB).num_learners)
        .training(**ppo_args(cfg))
        .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionFeatureModule,
                                               model_config=module_config(cfg)))
        .debugging(seed=cfg.seed)
        .callbacks(functools.partial(PoolWeights,  # type: ignore
                                     every=cfg.section(RLLIB).snapshot_every))
    )
    return config


def learner_net(algorithm: Any) -> Any:
    """The learner's :class:`allfives_train.algorithms.ppo_batched.net.ResidualActorCritic` (local
    learner)."""
    return algorithm.get_module(MODULE).net


def policy_arrays(algorithm: Any) -> dict[str, np.ndarray]:
    return learner_net(algorithm).numpy_policy().arrays()


class PoolWeights(RLlibCallback):
    """Every env runner's ``self`` opponents play the learner's weights of the last
    iteration; every ``every`` iterations a copy joins its snapshots."""

    def __init__(self, every: int) -> None:
        super().__init__()
        self.every = every

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        push_pool(algorithm, snapshot=None)

    def on_train_result(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        it = algorithm.iteration
        push_pool(algorithm, snapshot=f"snap_{it:06d}" if it % self.every == 0 else None)


def push_pool(algorithm: Any, snapshot: str | None) -> None:
    arrays = policy_arrays(algorithm)

    def _set(env_runner: Any) -> None:
        if getattr(env_runner, "env", None) is None:  # the local runner of remote ones
            return
        env = env_runner.env.unwrapped
        env.set_self(arrays)
        if snapshot is not None:
            env.add_snapshot(arrays, snapshot)

    algorithm.env_runner_group.foreach_env_runner(_set)


def export_policy(algorithm: Any, cfg: TrainConfig, folder: Path, card: dict[str, Any]) -> None:
    """The actor as ``policy.npz`` (data only) and a fast-path ``card.json`` in ``folder``,
    so that ``ckpt:<folder>`` plays it."""
    import json

    from allfives_train.shell.checkpoints import make_card

    policy = learner_net(algorithm).numpy_policy()
    policy.save(folder / "policy.npz")
    ours = make_card(cfg.game().rules, policy, int(card["env_steps"]),
                     float(card.get("wall_time_s", 0.0)), cfg.to_dict(), [], None)
    ours["algo"] = "PPO on Ray RLlib (engine batched, train/rllib/batched.py)"
    (folder / "card.json").write_text(json.dumps(ours, indent=1, default=str) + "\n")
