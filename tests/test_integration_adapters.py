"""The torch-free adapters for other MARL libraries (allfives_env.envs.adapters): the RLlib
observation keys and the EpisodeLog recorder. No extra needed."""

from __future__ import annotations

import numpy as np
import pettingzoo.test as pzt
import pytest
from gymnasium import spaces
from marl_checks import expected_returns
from pettingzoo import AECEnv

import allfives_env.env as allfives
from allfives_env.envs.adapters import EpisodeLog, RLlibObservation, rllib_aec_env
from allfives_env.game.rules import make_rules


def play_masked_random(env, seed: int, games: int = 1) -> None:
    rng = np.random.default_rng(seed)
    for g in range(games):
        env.reset(seed=seed + g)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_rllib_observation_passes_the_pettingzoo_api_test(players: int) -> None:
    pzt.api_test(rllib_aec_env(players=players, target=60), num_cycles=300)


def test_rllib_observation_renames_the_key_and_keeps_the_arrays() -> None:
    plain, wrapped = allfives.env(players=3), rllib_aec_env(players=3)
    inner = plain.observation_space("player_0")
    space = wrapped.observation_space("player_1")
    assert isinstance(space, spaces.Dict) and set(space.spaces) == {"observations", "action_mask"}
    assert space["observations"] == inner["observation"]
    assert space["action_mask"] == inner["action_mask"]
    plain.reset(seed=5)
    wrapped.reset(seed=5)
    for agent in plain.possible_agents:
        a, b = plain.observe(agent), wrapped.observe(agent)
        np.testing.assert_array_equal(a["observation"], b["observations"])
        np.testing.assert_array_equal(a["action_mask"], b["action_mask"])
        assert b["action_mask"].dtype == np.int8


def test_rllib_observation_changes_no_reward_or_turn() -> None:
    """Same seed, same actions: the wrapped env's last() matches the plain env's at every step."""
    plain, wrapped = allfives.env(players=4, reward="points"), rllib_aec_env(players=4,
                                                                             reward="points")
    plain.reset(seed=11)
    wrapped.reset(seed=11)
    rng = np.random.default_rng(0)
    for agent in plain.agent_iter():
        assert wrapped.agent_selection == agent
        obs, rew, term, trunc, _ = plain.last()
        obs2, rew2, term2, trunc2, _ = wrapped.last()
        assert (rew, term, trunc) == (rew2, term2, trunc2)
        np.testing.assert_array_equal(obs["observation"], obs2["observations"])
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        plain.step(action)
        wrapped.step(action)
    assert not wrapped.agents


class _BareObservations(AECEnv):
    """An AEC env whose observations are a bare Discrete, as rock-paper-scissors' (PettingZoo's
    rps_v2 itself imports pygame, which this test does not need)."""

    metadata = {"name": "bare_observations_v0"}
    possible_agents = ["player_0", "player_1"]

    def observation_space(self, agent: str) -> spaces.Space:
        return spaces.Discrete(4)

    def action_space(self, agent: str) -> spaces.Space:
        return spaces.Discrete(3)


def test_rllib_observation_refuses_other_observation_spaces() -> None:
    with pytest.raises(ValueError, match="Dict\\(observation, action_mask\\); player_0 has "
                                         "Discrete\\(4\\)"):
        RLlibObservation(_BareObservations())


@pytest.mark.parametrize("players,reward", [(2, "win"), (3, "points"), (4, "win"),
                                            (4, "points")])
def test_episode_log_records_what_the_env_paid(players: int, reward: str) -> None:
    env = EpisodeLog(allfives.env(players=players, reward=reward, target=80))
    play_masked_random(env, seed=3, games=3)
    rules = make_rules(players=players, target=80)
    assert len(env.episodes) == 3
    for ep in env.episodes:
        assert ep["illegal"] == 0 and ep["steps"] > 0
        got = [ep["returns"][f"player_{s}"] for s in range(players)]
        want = expected_returns(rules, ep["scores"], ep["winner"], ep["truncated"], reward)
        assert got == pytest.approx(want, abs=1e-9)
        assert max(ep["scores"]) >= 80 or ep["truncated"]


def test_episode_log_counts_an_action_outside_the_mask() -> None:
    env = EpisodeLog(allfives.env(players=2, illegal_action="lose"))
    env.reset(seed=1)
    agent = env.agent_selection
    bad = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    env.step(bad)
    assert len(env.episodes) == 1
    ep = env.episodes[0]
    assert ep["illegal"] == 1 and ep["steps"] == 1
    assert ep["returns"][agent] == -1.0
