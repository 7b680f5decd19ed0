"""``AllFivesVectorEnv``: spaces, masks, rewards, same-step autoreset, opponents."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from gymnasium.vector import AutoresetMode  # noqa: E402

from allfives_agents.trained.policy_numpy import NumpyPolicy  # noqa: E402
from allfives_env.game.observation import OBS_SIZE  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_train.games.vector_env import AllFivesVectorEnv  # noqa: E402


def _random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(mask.shape) * mask).argmax(axis=1)


def _play(env: AllFivesVectorEnv, steps: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    out = {"returns": [], "won": [], "obs": [obs], "rewards": []}
    for _ in range(steps):
        mask = infos["action_mask"]
        assert mask.any(axis=1).all()
        assert np.array_equal(mask, env.action_masks())
        obs, rew, term, trunc, infos = env.step(_random_actions(mask, rng))
        assert obs.shape == (env.num_envs, OBS_SIZE) and obs.dtype == np.float32
        assert env.observation_space.contains(obs)
        out["obs"].append(obs)
        out["rewards"].append(rew)
        done = term | trunc
        if done.any():
            assert np.array_equal(infos["_final_obs"], done)
            assert np.array_equal(infos["final_info"]["_return"], done)
            for b in np.flatnonzero(done):
                assert infos["final_obs"][b].shape == (OBS_SIZE,)
            out["returns"] += infos["final_info"]["return"][done].tolist()
            out["won"] += infos["final_info"]["won"][done].tolist()
    return out


def test_record_episode_statistics_wrapper() -> None:
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    env = RecordEpisodeStatistics(AllFivesVectorEnv(make_rules("five_up"), num_envs=8, seed=0))
    rng = np.random.default_rng(0)
    _, infos = env.reset(seed=[1] * 8)
    episodes = 0
    for _ in range(300):
        _, _, term, trunc, infos = env.step(_random_actions(infos["action_mask"], rng))
        if "episode" in infos:
            assert np.array_equal(infos["_episode"], term | trunc)
            # (its returns skip the first reward of each next game: the wrapper counts
            # as in next-step autoreset; final_info["return"] is exact)
            episodes += int(infos["_episode"].sum())
    assert episodes > 0


def test_spaces_and_metadata() -> None:
    env = AllFivesVectorEnv(make_rules(), num_envs=8, seed=0)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_observation_space.shape == (OBS_SIZE,)
    assert env.single_action_space.n == 140
    assert env.observation_space.shape == (8, OBS_SIZE)


@pytest.mark.parametrize("preset,players,teams", [("all_fives", 2, False),
                                                  ("five_up", 3, False),
                                                  ("muggins", 4, True)])
def test_random_learner_loses_to_greedy(preset: str, players: int, teams: bool) -> None:
    env = AllFivesVectorEnv(make_rules(preset, players=players, teams=teams), num_envs=32,
                            opponents=[{"agent": "greedy", "weight": 1.0}], seed=1,
                            partner="greedy")
    out = _play(env, 400)
    assert len(out["returns"]) >= 20
    # a win/loss term is in every decided game's return; random play mostly loses
    assert np.mean(out["won"]) < 0.5
    assert all(-2.5 <= r <= 2.5 for r in out["returns"])


def test_same_seed_same_run() -> None:
    runs = [_play(AllFivesVectorEnv(make_rules("five_up"), num_envs=8, seed=3,
                                    opponents=[{"agent": "heuristic", "weight": 1},
                                               {"agent": "random", "weight": 1}]), 60, 3)
            for _ in range(2)]
    assert all(np.array_equal(a, b) for a, b in zip(runs[0]["obs"], runs[1]["obs"]))
    assert all(np.array_equal(a, b) for a, b in zip(runs[0]["rewards"], runs[1]["rewards"]))


def test_illegal_action_ends_the_game_as_a_loss() -> None:
    env = AllFivesVectorEnv(make_rules(), num_envs=4, seed=0)
    _, infos = env.reset(seed=0)
    actions = infos["action_mask"].argmax(axis=1)
    actions[1] = int(np.flatnonzero(~infos["action_mask"][1])[0])
    _, rew, term, _, infos = env.step(actions)
    assert term[1] and rew[1] == -2.0
    assert infos["_illegal_action"][1] and infos["illegal_action"][1] == actions[1]
    assert infos["action_mask"][1].any()  # a new game is ready


def test_self_and_snapshot_opponents_play_legally() -> None:
    rng = np.random.default_rng(0)
    policy = NumpyPolicy([(rng.normal(size=(OBS_SIZE, 8)), np.zeros(8)),
                          (rng.normal(size=(8, 140)), np.zeros(140))], "relu")
    env = AllFivesVectorEnv(make_rules(players=3), num_envs=16, seed=0,
                            opponents=[{"agent": "self", "weight": 1},
                                       {"agent": "snapshots", "weight": 1}])
    env.set_self(policy.arrays())
    env.add_snapshot(policy.arrays(), "snap0")
    out = _play(env, 200)
    assert len(out["returns"]) > 0


def test_margin_rewards_sum_to_the_final_margin() -> None:
    """Per game: the rewards add up to the margin change over the learner's decisions
    plus the win term (checked with the engine's scores before the first decision)."""
    env = AllFivesVectorEnv(make_rules("five_up"), num_envs=1, seed=5,
                            opponents=[{"agent": "greedy", "weight": 1}])
    rng = np.random.default_rng(0)
    _, infos = env.reset(seed=5)
    start = float(env._before[0])
    total = 0.0
    for _ in range(2000):
        _, rew, term, trunc, infos = env.step(_random_actions(infos["action_mask"], rng))
        total += float(rew[0])
        if term[0] or trunc[0]:
            margin = float(infos["final_info"]["margin"][0])
            won = bool(infos["final_info"]["won"][0])
            expected = (margin - start) / env.rules.target + (1.0 if won else -1.0)
            assert total == pytest.approx(expected)
            return
    raise AssertionError("the game did not end")


def test_checkpoint_opponents_and_table_check() -> None:
    env = AllFivesVectorEnv(make_rules(), num_envs=8, seed=0,
                            opponents=[{"agent": "ckpt:all_fives_2p", "weight": 1}])
    assert len(_play(env, 100)["obs"]) == 101
    with pytest.raises(ValueError, match="seats"):
        AllFivesVectorEnv(make_rules(players=3), num_envs=2,
                          opponents=[{"agent": "ckpt:all_fives_2p", "weight": 1}])
