"""``oracle_critic``: a PPO or Deep Monte-Carlo critic that reads every other seat's hand (a
training signal that sees what the seat cannot), while the actor, the checkpoint and everything
that plays see only the seat's own observation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
torch = pytest.importorskip("torch")

from allfives_env.cli import main  # noqa: E402
from allfives_env.observation import (  # noqa: E402
    HIDDEN_HANDS_SIZE,
    OBS_SIZE,
    hidden_hands,
    named_views,
)
from allfives_env.rules import make_rules  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, load_config  # noqa: E402
from allfives_train.fast_net import make_net  # noqa: E402
from allfives_train.shards import learner_obs_size  # noqa: E402
from allfives_train.vector_env import AllFivesVectorEnv  # noqa: E402

RESIDUAL = DEFAULT_CONFIG.parent / "residual_2p.yaml"


def _played(env: AllFivesVectorEnv, steps: int, seed: int) -> tuple[np.ndarray, list]:
    obs, infos = env.reset(seed=seed)
    rng, finals = np.random.default_rng(seed), []
    for _ in range(steps):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        obs, _, _, _, infos = env.step(acts)
        if "final_obs" in infos:
            finals += list(infos["final_obs"][infos["_final_obs"]])
    return obs, finals


def critic_inputs(run: Path) -> int:
    """How many inputs the critic saved in ``run``'s final trainer state reads."""
    saved = torch.load(run / "final" / "trainer.pt", weights_only=True)
    critic_in = [v for k, v in saved["agent"].items() if k.startswith("critic.0.weight")]
    assert critic_in
    return int(critic_in[0].shape[1])


@pytest.mark.parametrize("players,teams", [(2, False), (3, False), (4, True)])
def test_the_hidden_part_is_the_other_hands(players: int, teams: bool) -> None:
    env = AllFivesVectorEnv(make_rules(players=players, teams=teams), 16, seed=3,
                            action_features=9, hidden=True)
    width = OBS_SIZE + 140 * 9 + HIDDEN_HANDS_SIZE
    assert env.single_observation_space.shape == (width,)
    for steps in (0, 3, 9):
        obs, finals = _played(env, steps, seed=steps)
        assert obs.shape == (16, width) and all(f.shape == (width,) for f in finals)
        for row in obs:
            seen = named_views(row[:OBS_SIZE])
            hidden = row[-HIDDEN_HANDS_SIZE:].reshape(3, 28)
            sizes = np.rint(seen["hand_sizes"] * 10)
            assert list(hidden.sum(1)[:players - 1]) == list(sizes[1:players])
            assert not hidden[players - 1:].any()
            assert not (hidden.sum(0) * seen["hand"]).any()  # never the seat's own tiles
            assert not (hidden.sum(0) * seen["played_by"].reshape(4, 28).sum(0)).any()
            assert hidden.sum(0).max() <= 1  # each tile in one hand


def test_hidden_hands_turn_order_from_the_seat() -> None:
    hands = np.array([[0b1, 0b10, 0b100, 0]])
    rows = hidden_hands(hands, np.array([1]), 3).reshape(3, 28)
    assert rows[0].nonzero()[0].tolist() == [2] and rows[1].nonzero()[0].tolist() == [0]


def test_the_actor_never_reads_the_hidden_part() -> None:
    cfg = load_config(RESIDUAL, {"oracle_critic": True, "features": 9, "net_arch": [16, 16]})
    net = make_net(cfg)
    assert net.hidden_size == HIDDEN_HANDS_SIZE
    env = AllFivesVectorEnv(make_rules(), 8, seed=1, action_features=9, hidden=True)
    obs, infos = env.reset(seed=1)
    assert obs.shape[1] == learner_obs_size(cfg, 9)
    x, mask = torch.as_tensor(obs), torch.as_tensor(infos["action_mask"])
    other = x.clone()
    other[:, -HIDDEN_HANDS_SIZE:] = torch.as_tensor(
        np.random.default_rng(0).integers(0, 2, (8, HIDDEN_HANDS_SIZE)), dtype=torch.float32)
    with torch.no_grad():
        assert torch.equal(net.logits(x, mask), net.logits(other, mask))
        assert not torch.allclose(net.value(x), net.value(other))  # the critic does read it
    plain = make_net(load_config(RESIDUAL, {"features": 9, "net_arch": [16, 16]}))
    assert plain.hidden_size == 0


@pytest.mark.parametrize("overrides,message", [
    ({"oracle_critic": "yes"}, "oracle_critic='yes': expected bool"),
    ({"oracle_critic": True, "algo": "search_distill"}, "true is for algo ppo_batched or dmc"),
    ({"oracle_critic": True, "policy": "mlp"}, "true is for algo ppo_batched or dmc"),
])
def test_bad_values_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_config(RESIDUAL, overrides)


def test_a_run_with_it_trains_and_its_checkpoint_plays(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert main(["train", "--config", str(RESIDUAL), "--oracle-critic", "--total-steps", "4096",
                 "--n-envs", "32", "--n-steps", "64", "--eval-games", "4", "--features", "9",
                 "--net-arch", "16", "16", "--rollout-workers", "1", "--run-dir", str(run),
                 "--quiet"]) == 0
    assert main(["eval", "--agents", f"ckpt:{run / 'final'}", "greedy", "--games", "2",
                 "--workers", "1", "--no-progress"]) == 0
    assert critic_inputs(run) == OBS_SIZE + HIDDEN_HANDS_SIZE


def test_deep_monte_carlo_with_it_trains_and_its_checkpoint_plays(tmp_path: Path) -> None:
    """In dmc the critic is V(s) of Q(s, a) = V(s) + scale * centred logit: with the oracle
    critic it reads the hidden hands, the logits (what plays) do not."""
    dmc = DEFAULT_CONFIG.parent / "dmc_2p.yaml"
    cfg = load_config(dmc, {"oracle_critic": True})
    net = make_net(cfg)
    assert net.hidden_size == HIDDEN_HANDS_SIZE
    run = tmp_path / "run"
    assert main(["train", "--config", str(dmc), "--oracle-critic", "--device", "cpu",
                 "--total-steps", "256", "--n-envs", "8", "--n-steps", "16", "--batch-size",
                 "64", "--n-epochs", "1", "--eval-games", "4", "--rollout-workers", "1",
                 "--run-dir", str(run), "--quiet"]) == 0
    assert critic_inputs(run) == OBS_SIZE + HIDDEN_HANDS_SIZE
    assert main(["eval", "--agents", f"ckpt:{run / 'final'}", "greedy", "--games", "2",
                 "--workers", "1", "--no-progress"]) == 0
