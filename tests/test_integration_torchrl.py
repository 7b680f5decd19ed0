"""TorchRL (the ``torchrl`` extra): whole 2- and 4-seat games through ``PettingZooWrapper(...,
use_mask=True)`` (examples/torchrl_rollout.py), with TorchRL's masked random actions and a
masked MLP policy; no action outside the mask and per-seat reward sums equal to what the env
paid."""

from __future__ import annotations

import pytest

pytest.importorskip("torchrl")

from marl_checks import expected_returns, load_example  # noqa: E402

from allfives_env.game.rules import make_rules  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested")]


@pytest.fixture(scope="module")
def example():
    return load_example("torchrl_rollout")


@pytest.mark.parametrize("players,policy,reward,grouped", [
    (2, "random", "win", True), (2, "mlp", "points", True), (4, "random", "points", True),
    (4, "mlp", "win", True), (2, "random", "points", False), (4, "random", "win", False)])
def test_torchrl_plays_whole_games_with_masks_and_the_envs_rewards(
        example, players: int, policy: str, reward: str, grouped: bool) -> None:
    out = example.rollout(players, games=2, seed=players, policy=policy, reward=reward,
                          grouped=grouped, target=60)
    rules = make_rules(players=players, target=60)
    group_map = out["env"].group_map
    agents = [a for members in group_map.values() for a in members]
    assert sorted(agents) == [f"player_{s}" for s in range(players)]
    assert len(group_map) == (1 if grouped else players)
    assert len(out["trajectories"]) == len(out["logs"]) == 2
    for td, log in zip(out["trajectories"], out["logs"], strict=True):
        illegal, acting, sums = example.check(td, group_map)
        assert illegal == 0 and log["illegal"] == 0
        assert td.shape[0] == log["steps"] == acting  # one seat acts per step
        assert bool(td["next", "done"][-1]) and not td["next", "done"][:-1].any()
        env_paid = [log["returns"][a] for a in agents]
        assert sums == pytest.approx(env_paid, abs=1e-6)
        want = expected_returns(rules, log["scores"], log["winner"], log["truncated"], reward)
        assert [log["returns"][f"player_{s}"] for s in range(players)] == pytest.approx(
            want, abs=1e-9)
