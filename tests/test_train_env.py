"""The single-agent training env: SB3's check_env, rewards, seats, teams, illegal actions."""

from __future__ import annotations

import numpy as np
import pytest

from allfives_env.game.rules import make_rules
from allfives_train.games.single_agent import AllFivesSingleAgentEnv

pytest.importorskip("stable_baselines3")
TABLES = [{"players": 2}, {"players": 3}, {"players": 4}, {"players": 4, "teams": False}]


def play_out(env: AllFivesSingleAgentEnv, rng: np.random.Generator
             ) -> tuple[list[float], dict, bool, bool]:
    rewards, done = [], False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        _, r, term, trunc, info = env.step(int(rng.choice(legal)))
        rewards.append(r)
        done = term or trunc
    return rewards, info, term, trunc


@pytest.mark.parametrize("table", TABLES)
def test_passes_sb3_check_env(table: dict) -> None:
    from stable_baselines3.common.env_checker import check_env

    check_env(AllFivesSingleAgentEnv(make_rules(**table), seed=0), warn=True)


@pytest.mark.parametrize("table", TABLES)
def test_margin_rewards_sum_to_the_final_margin(table: dict) -> None:
    rules = make_rules(**table)
    env = AllFivesSingleAgentEnv(rules, margin_reward=1.0, win_reward=0.0, seed=1)
    rng = np.random.default_rng(1)
    for game in range(3):
        env.reset(seed=game)
        before = env._margin()  # points scored before the learner's first move are not its own
        rewards, info, _, _ = play_out(env, rng)
        assert sum(rewards) == pytest.approx((info["margin"] - before) / rules.target)


def test_win_reward_is_added_at_the_end_only() -> None:
    env = AllFivesSingleAgentEnv(make_rules(players=2), margin_reward=0.0, win_reward=1.0)
    env.reset(seed=4)
    rewards, info, term, _ = play_out(env, np.random.default_rng(0))
    assert term and all(r == 0.0 for r in rewards[:-1])
    assert rewards[-1] == (1.0 if info["won"] else -1.0)
    assert info["won"] == (env.state.winner == env.seat)


def test_the_learner_seat_is_drawn_each_game_and_it_acts_only_on_its_turn() -> None:
    env = AllFivesSingleAgentEnv(make_rules(players=3), seed=2)
    seats = set()
    for _ in range(30):
        _, info = env.reset()
        seats.add(info["seat"])
        assert env.state.current == env.seat and env.action_masks().any()
    assert seats == {0, 1, 2}


def test_same_seed_same_game() -> None:
    def trajectory(seed: int) -> list[float]:
        env = AllFivesSingleAgentEnv(make_rules(players=2), seed=9)
        env.reset(seed=seed)
        return play_out(env, np.random.default_rng(5))[0]

    assert trajectory(3) == trajectory(3)
    assert trajectory(3) != trajectory(4)


def test_teams_partner_and_opponents() -> None:
    env = AllFivesSingleAgentEnv(make_rules(players=4), opponents=[{"agent": "greedy"}],
                                 partner="random", seed=0)
    env.reset(seed=0)
    partner = (env.seat + 2) % 4
    assert env.players[partner].name == "random"
    assert {env.players[(env.seat + k) % 4].name for k in (1, 3)} == {"greedy"}


def test_an_illegal_action_ends_the_game_as_a_loss() -> None:
    env = AllFivesSingleAgentEnv(make_rules(players=2), win_reward=1.0, seed=0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, term, _, info = env.step(illegal)
    assert term and reward == -2.0 and info["illegal_action"] == illegal


def test_snapshots_and_self_play_opponents_use_numpy_weights() -> None:
    from allfives_agents.trained.policy_numpy import NumpyPolicy

    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(386, 8)).astype(np.float32), np.zeros(8, np.float32)),
              (rng.normal(size=(8, 140)).astype(np.float32), np.zeros(140, np.float32))]
    arrays = NumpyPolicy(layers, "relu").arrays()
    env = AllFivesSingleAgentEnv(make_rules(players=2), opponents=[{"agent": "snapshots"}],
                                 seed=0)
    env.add_snapshot(arrays, "snap_1")
    env.reset(seed=0)
    opponent = env.players[1 - env.seat]
    assert opponent.name == "snap_1" and opponent.policy is not None
    play_out(env, rng)
