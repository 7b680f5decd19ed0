"""The RLlib pieces: the registered env, the PPO config with action masking, the self-play
snapshot callback. Imports Ray (the ``rllib`` extra)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule, MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
    ActionMaskingTorchRLModule,
)
from ray.tune.registry import register_env

from allfives_env.env import ENV_NAME
from allfives_env.envs.adapters import rllib_aec_env
from allfives_env.game.rules import Rules
from allfives_train.config import TrainConfig
from allfives_train.ppo_section import PPO
from allfives_train.rllib.mapping import MAIN, make_mapping, snapshot_id, trained_modules
from allfives_train.rllib.section import RLLIB, env_config, uses_snapshots, uses_table

#: The name checkpoints written before allfives_v1 hold in their config (Ray Tune's registry).
V0_ENV_NAME = "allfives_v0"
TABLE_ENV_NAME = "allfives_table"


def make_env(env_config: dict[str, Any]) -> PettingZooEnv:
    """RLlib's view of ``allfives_env.env(**env_config)`` (observation key ``observations``)."""
    return PettingZooEnv(rllib_aec_env(**dict(env_config)))


def make_v0_env(env_config: dict[str, Any]) -> PettingZooEnv:
    """:func:`make_env` with v0's default ``illegal_action="raise"`` (allfives_env.allfives_v0),
    so ``Algorithm.from_checkpoint`` of a checkpoint made under that name finds its env."""
    return make_env({"illegal_action": "raise", **dict(env_config)})


def make_table_env(env_config: dict[str, Any]) -> Any:
    """The table env (:mod:`allfives_train.rllib.table`): opponent pool and shaped reward."""
    from allfives_train.rllib.table import AllFivesTable

    return AllFivesTable(dict(env_config))


def register() -> str:
    """Register the envs with Ray Tune's registry (:data:`ENV_NAME`, :data:`TABLE_ENV_NAME`,
    and the kept :data:`V0_ENV_NAME`)."""
    register_env(ENV_NAME, make_env)
    register_env(V0_ENV_NAME, make_v0_env)
    register_env(TABLE_ENV_NAME, make_table_env)
    return ENV_NAME


def module_spec(cfg: TrainConfig) -> RLModuleSpec:
    """One masked PPO module (the same for every module id)."""
    model = DefaultModelConfig(fcnet_hiddens=list(cfg.net_arch),
                               fcnet_activation=cfg.activation, vf_share_layers=False)
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model)


def runner_args(cfg: TrainConfig) -> dict[str, Any]:
    """``PPOConfig.env_runners``' arguments: how many runners, games each, where."""
    own = cfg.section(RLLIB)
    return {"num_env_runners": own.num_env_runners,
            "num_envs_per_env_runner": own.num_envs_per_env_runner,
            "custom_resources_per_env_runner": dict(own.env_runner_resources)}


def ppo_args(cfg: TrainConfig) -> dict[str, Any]:
    """``PPOConfig.training``'s arguments from the config's PPO fields."""
    ppo, own = cfg.section(PPO), cfg.section(RLLIB)
    return {"lr": cfg.learning_rate, "gamma": cfg.gamma, "lambda_": ppo.gae_lambda,
            "clip_param": ppo.clip_range, "entropy_coeff": ppo.ent_coef,
            "vf_loss_coeff": ppo.vf_coef, "train_batch_size_per_learner": own.train_batch_size,
            "minibatch_size": own.minibatch_size, "num_epochs": own.num_epochs}


def build_config(cfg: TrainConfig) -> PPOConfig:
    """The full PPO config of a run."""
    rules, own = cfg.game().rules, cfg.section(RLLIB)
    trained = trained_modules(own.policy, rules)
    modules = trained + ([snapshot_id(0)] if uses_snapshots(cfg) else [])
    config = (
        PPOConfig()
        .environment(TABLE_ENV_NAME if uses_table(cfg) else ENV_NAME,
                     env_config=env_config(cfg),
                     disable_env_checking=True)  # its random probe ignores the action mask
        .framework("torch")
        .env_runners(**runner_args(cfg))
        .learners(num_learners=own.num_learners)
        .training(**ppo_args(cfg))
        .multi_agent(policies=set(modules),
                     policy_mapping_fn=make_mapping(own.policy, rules, modules[len(trained):]),
                     policies_to_train=trained)
        .rl_module(rl_module_spec=MultiRLModuleSpec(
            rl_module_specs={m: module_spec(cfg) for m in modules}))
        .debugging(seed=cfg.seed)
    )
    if uses_snapshots(cfg):
        config.callbacks(functools.partial(  # type: ignore[arg-type]  # RLlib calls it
            SelfPlaySnapshots, rules=rules, spec=module_spec(cfg), every=own.snapshot_every,
            keep=own.snapshot_keep, policy=own.policy))
    return config


def copy_module(algorithm: Any, source: str, target: str) -> None:
    """Set module ``target``'s weights to ``source``'s, in the learners (the full module) and in
    every env runner (its own copy of ``source``). The runners are set directly: the weight
    sync that ``Algorithm.set_state`` triggers skips runners whose weights sequence number is
    unchanged, which it is between two updates."""
    state = algorithm.learner_group.get_weights(module_ids=[source])[source]
    algorithm.learner_group.set_state({"learner": {"rl_module": {target: state}}})

    def _copy(env_runner: Any) -> None:
        env_runner.module[target].set_state(env_runner.module[source].get_state())

    algorithm.env_runner_group.foreach_env_runner(_copy)


class SelfPlaySnapshots(RLlibCallback):
    """Self-play against frozen snapshots: ``snap_0`` starts as a copy of the untrained
    ``main``; every ``every`` iterations a new frozen copy of ``main`` joins the pool and the
    oldest beyond ``keep`` leaves it (RLlib's self-play example pattern)."""

    def __init__(self, rules: Rules, spec: RLModuleSpec, every: int, keep: int,
                 policy: str = "selfplay") -> None:
        super().__init__()
        self.rules, self.spec, self.every, self.keep = rules, spec, every, keep
        self.policy = policy
        self.snapshots = [snapshot_id(0)]
        self.made = 1

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        copy_module(algorithm, MAIN, self.snapshots[0])

    def on_train_result(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        if algorithm.iteration % self.every == 0:
            self.add_snapshot(algorithm)
        result["snapshots"] = list(self.snapshots)

    def add_snapshot(self, algorithm: Any) -> None:
        new = snapshot_id(self.made)
        dropped = self.snapshots[:max(0, len(self.snapshots) + 1 - self.keep)]
        self.set_pool(algorithm, self.snapshots[len(dropped):] + [new], self.made + 1)
        copy_module(algorithm, MAIN, new)

    def set_pool(self, algorithm: Any, snapshots: list[str], made: int) -> None:
        """Make the pool ``snapshots`` (``made``: how many were ever made): add the modules
        it lacks (their weights are set by the caller), remove those it no longer holds."""
        mapping = make_mapping(self.policy, self.rules, snapshots)
        main = algorithm.get_module(MAIN)
        spec = dataclasses.replace(self.spec, observation_space=main.observation_space,
                                   action_space=main.action_space)
        for new in [m for m in snapshots if m not in self.snapshots]:
            algorithm.add_module(module_id=new, module_spec=spec,
                                 new_agent_to_module_mapping_fn=mapping)
        for old in [m for m in self.snapshots if m not in snapshots]:
            algorithm.remove_module(old, new_agent_to_module_mapping_fn=mapping)
        self.snapshots, self.made = list(snapshots), made


def snapshot_pool(algorithm: Any) -> SelfPlaySnapshots | None:
    """The run's self-play snapshot callback (None: the run uses no snapshots)."""
    callbacks = algorithm.callbacks
    for callback in callbacks if isinstance(callbacks, list) else [callbacks]:
        if isinstance(callback, SelfPlaySnapshots):
            return callback
    return None


def pool_state(algorithm: Any) -> dict[str, Any]:
    """What a checkpoint's card keeps of the snapshot pool (RLlib's state does not hold it):
    the snapshots in play and how many were made; {} without a pool."""
    pool = snapshot_pool(algorithm)
    return {} if pool is None else {"snapshots": list(pool.snapshots),
                                    "snapshots_made": pool.made}


def restore_pool(algorithm: Any, snapshots: list[str] | None, made: int | None) -> None:
    """Before restoring a checkpoint: the snapshot pool its card names (so that every module
    it holds exists to take its weights)."""
    pool = snapshot_pool(algorithm)
    if pool is not None and snapshots:
        pool.set_pool(algorithm, [str(m) for m in snapshots], int(made or len(snapshots)))


def push_weights(algorithm: Any) -> None:
    """Every module's weights, from the learners to every env runner, now (after a restore:
    RLlib's own sync may skip runners whose weights sequence number it takes as current)."""
    weights = algorithm.learner_group.get_weights()

    def _set(env_runner: Any) -> None:
        module = getattr(env_runner, "module", None)
        if module is None:
            return
        if not isinstance(module, MultiRLModule):  # a single-agent run (engine batched)
            module.set_state(next(iter(weights.values())))
            return
        for module_id, state in weights.items():
            if module_id in module:
                module[module_id].set_state(state)

    algorithm.env_runner_group.foreach_env_runner(_set)
