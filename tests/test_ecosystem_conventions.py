"""The ecosystem's conventions (issue 9, items 13, 14 and 17): env factories pickle and run in
subprocesses under every start method; illegal actions end the game with -1 and a warning by
default (PettingZoo's classic convention), so the standard checkers that sample actions
without a mask pass; ``last()`` after the episode was stepped out raises ResetNeededError."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import allfives_env
from allfives_env.env import ResetNeededError, env
from allfives_env.game.tiles import N_ACTIONS


def _illegal(e) -> int:
    mask = e.observe(e.agent_selection)["action_mask"]
    return next(a for a in range(N_ACTIONS) if not mask[a])


# ---------------------------------------------------------------- 14: the default rule
def test_illegal_action_by_default_ends_the_game_with_a_warning() -> None:
    e = env(players=2)
    e.reset(seed=3)
    offender = e.agent_selection
    bad = _illegal(e)
    with pytest.warns(UserWarning, match=f"illegal action {bad}"):
        e.step(bad)
    assert all(e.terminations.values())
    assert e.rewards == {a: (-1.0 if a == offender else 0.0) for a in e.possible_agents}
    assert e.infos[offender] == {"illegal_action": bad}


def test_raise_stays_available() -> None:
    e = env(players=2, illegal_action="raise")
    e.reset(seed=3)
    with pytest.raises(ValueError, match="illegal action"):
        e.step(_illegal(e))


# ---------------------------------------------------------------- 17: last() when stepped out
def test_last_after_every_agent_was_stepped_out_raises_reset_needed() -> None:
    e = env(players=3)
    e.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(_illegal(e))
    while e.agents:
        e.step(None)
    with pytest.raises(ResetNeededError, match="call reset"):
        e.last()
    with pytest.raises(ResetNeededError, match="call reset"):
        e.step(None)
    e.reset(seed=1)
    assert e.last()[1] == 0.0


# ---------------------------------------------------------------- 14: standard checkers
@pytest.fixture
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_pettingzoo_state_and_seed_tests_pass(quiet) -> None:
    from pettingzoo.test import parallel_seed_test, seed_test, state_test
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    state_test(env(players=3), turn_based_aec_to_parallel(env(players=3)), num_cycles=40)
    seed_test(lambda: env(players=2), num_cycles=100)
    parallel_seed_test(lambda: turn_based_aec_to_parallel(env(players=2)), num_cycles=100)


def test_sb3_check_env_on_a_plain_single_agent_wrapper(quiet) -> None:
    pytest.importorskip("stable_baselines3")
    from plain_envs import PlainSingleAgent
    from stable_baselines3.common.env_checker import check_env

    check_env(PlainSingleAgent(), warn=False)


@pytest.mark.slow
def test_tianshou_collects_with_random_actions(quiet) -> None:
    pytest.importorskip("tianshou")
    from tianshou.algorithm import (
        MARLRandomDiscreteMaskedOffPolicyAlgorithm,
        MultiAgentOffPolicyAlgorithm,
    )
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    def make() -> PettingZooEnv:
        return PettingZooEnv(allfives_env.env(players=2))

    probe = make()
    algos = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=probe.action_space)
             for _ in probe.agents]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=algos, env=probe)
    collector = Collector(algorithm, DummyVectorEnv([make]), VectorReplayBuffer(500, 1))
    collector.reset()
    stats = collector.collect(n_episode=3, random=True)
    assert stats.n_collected_episodes == 3


def test_rllib_env_pre_check_passes(quiet) -> None:
    pytest.importorskip("ray.rllib")
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    from allfives_env.envs.adapters import rllib_aec_env

    check_multiagent_environments(PettingZooEnv(rllib_aec_env(players=2)))


# ---------------------------------------------------------------- 13: pickling
def test_env_factories_pickle_by_reference() -> None:
    cloudpickle = pytest.importorskip("cloudpickle")
    factory = cloudpickle.loads(cloudpickle.dumps(lambda: allfives_env.env(players=2)))
    assert factory().possible_agents == ["player_0", "player_1"]
    assert pickle.loads(pickle.dumps(allfives_env.env)) is allfives_env.env
    made = cloudpickle.loads(cloudpickle.dumps(lambda: allfives_env.env.env(players=3)))()
    assert len(made.possible_agents) == 3


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_sb3_subproc_vec_env_under_every_start_method(method: str, quiet) -> None:
    pytest.importorskip("stable_baselines3")
    from plain_envs import PlainSingleAgent
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = SubprocVecEnv([lambda: PlainSingleAgent(players=2)] * 2, start_method=method)
    try:
        venv.seed(0)
        obs = venv.reset()
        assert obs.shape[0] == 2
        obs, rewards, dones, _ = venv.step(np.array([0, 0]))
        assert rewards.shape == (2,)
    finally:
        venv.close()


@pytest.mark.slow
def test_tianshou_subproc_vector_env_under_spawn(quiet) -> None:
    pytest.importorskip("tianshou")
    from tianshou.env import PettingZooEnv, SubprocVectorEnv

    venv = SubprocVectorEnv([lambda: PettingZooEnv(allfives_env.env(players=2))],
                            context="spawn")
    try:
        obs, _ = venv.reset(seed=0)
        assert obs[0]["agent_id"] in ("player_0", "player_1")
    finally:
        venv.close()
