"""Tianshou 2.x (the ``tianshou`` extra): whole 2- and 4-seat games through
``tianshou.env.PettingZooEnv`` (examples/tianshou_rollout.py), no action outside the mask,
collected rewards summing per game to what the env paid, and a few DQN updates."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("tianshou")

from marl_checks import expected_returns, load_example  # noqa: E402

from allfives_env.game.rules import make_rules  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def example():
    return load_example("tianshou_rollout")


@pytest.mark.parametrize("players,reward", [(2, "win"), (4, "points")])
def test_tianshou_plays_whole_games_with_masks_and_the_envs_rewards(example, players: int,
                                                                     reward: str) -> None:
    out = example.rollout(players, games=3, seed=players, train_steps=2, n_envs=2,
                          reward=reward, target=60)
    rules = make_rules(players=players, target=60)
    logs, sums, buffer = out["logs"], out["episodes"], out["buffer"]
    assert out["n_collected"] == 3 and len(sums) == len(logs) >= 3
    assert all(log["illegal"] == 0 for log in logs)
    idx = buffer.sample_indices(0)  # every stored transition
    acts, masks = buffer.act[idx], np.asarray(buffer.obs.mask[idx], dtype=bool)
    settling = (players - 1) * len(logs)  # SettleTurns: one turn per seat but the last mover
    assert len(idx) == len(buffer) == sum(log["steps"] for log in logs) + settling
    assert masks[np.arange(len(idx)), acts].all()
    for total, log in zip(sums, logs, strict=True):
        env_paid = [log["returns"][f"player_{s}"] for s in range(players)]
        assert total.tolist() == pytest.approx(env_paid, abs=1e-9)
        want = expected_returns(rules, log["scores"], log["winner"], log["truncated"], reward)
        assert env_paid == pytest.approx(want, abs=1e-9)
    assert len(out["losses"]) == 2
    for stats in out["losses"]:
        losses = stats.get_loss_stats_dict()
        assert losses and all(math.isfinite(v) for v in losses.values())


@pytest.mark.parametrize("players,reward", [(3, "win"), (4, "points")])
def test_every_seat_sees_its_final_reward_on_its_own_rows(example, players: int,
                                                          reward: str) -> None:
    """What each seat's algorithm learns from (its own rows) sums to what the env paid it;
    without SettleTurns the seats that did not move last miss their final reward."""
    for settle in (True, False):
        out = example.rollout(players, games=2, seed=7, n_envs=1, reward=reward,
                              settle=settle, target=60)
        assert len(out["own"]) == len(out["logs"]) == 2
        agree = [own.tolist() == pytest.approx(
            [log["returns"][f"player_{s}"] for s in range(players)], abs=1e-9)
            for own, log in zip(out["own"], out["logs"], strict=True)]
        assert all(agree) if settle else not any(agree)
