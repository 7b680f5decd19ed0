"""The ``counter`` feature (``features: 10``) in training: a network reading action_features/1
is widened without changing its play, new and widened actors train, save, load and play
(scalar ``ckpt:``, batched opponents, labels), and the config refuses what it cannot do."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from test_batched_bots import _positions  # noqa: E402
from test_residual_policy import CONFIG, TINY  # noqa: E402

from allfives.cli import main  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.batched.bots import make_batched_bot  # noqa: E402
from allfives_agents.features.action_features import (  # noqa: E402
    BASE_FEATURES,
    FEATURE_COUNTS,
    FEATURES,
    REGISTRY,
    action_features,
)
from allfives_agents.trained.policy_numpy import NumpyPolicy  # noqa: E402
from allfives_env.game.match import play_game  # noqa: E402
from allfives_env.game.observation import OBS_SIZE, observe  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.tiles import N_ACTIONS  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402
from allfives_train.algorithms.ppo_batched.net import make_agent_net, make_net  # noqa: E402
from allfives_train.algorithms.search_distill.label import Labeller, load_shards  # noqa: E402
from allfives_train.config import load_config  # noqa: E402
from allfives_train.games.vector_env import AllFivesVectorEnv  # noqa: E402

DMC = CONFIG.parent / "dmc_2p.yaml"
COUNTER_FEATURES = REGISTRY.count(2)  # action_features/2: counter too


def _inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations followed by all 10 features, and the masks, of random-play positions."""
    rows, masks = [], []
    for _games, states, live in _positions("all_fives", 2, False, n, seed=9):
        for b in live:
            st = states[b]
            view = SeatView.of(st, st.current)
            rows.append(np.concatenate([observe(st, st.current, list(view.legal)),
                                        action_features(view, COUNTER_FEATURES).ravel()]))
            mask = np.zeros(N_ACTIONS, bool)
            mask[list(view.legal)] = True
            masks.append(mask)
    return np.array(rows, np.float32), np.array(masks)


def _first9(x: np.ndarray) -> np.ndarray:
    f = x[:, OBS_SIZE:].reshape(len(x), N_ACTIONS, COUNTER_FEATURES)[..., :BASE_FEATURES]
    return np.concatenate([x[:, :OBS_SIZE], f.reshape(len(x), -1)], axis=1)


@pytest.mark.parametrize("head", [0, 16])
def test_widening_keeps_the_play_and_the_counter_then_counts(head: int) -> None:
    torch.manual_seed(0)
    net = make_agent_net("action_features", OBS_SIZE, N_ACTIONS, [32, 32], "relu")
    if head:
        net.add_head(head)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.05 * torch.randn_like(p))
    x, mask = _inputs(150)
    before = net.numpy_policy()
    assert before.n_features == BASE_FEATURES
    net.widen_features(COUNTER_FEATURES)
    after = net.numpy_policy()
    assert after.n_features == COUNTER_FEATURES
    assert after.obs_size == OBS_SIZE + N_ACTIONS * COUNTER_FEATURES
    np.testing.assert_allclose(after.logits(x), before.logits(_first9(x)), rtol=1e-5,
                               atol=1e-5)
    assert np.abs(x[:, OBS_SIZE:].reshape(len(x), N_ACTIONS, -1)[..., -1]).sum() > 0
    with torch.no_grad():  # a weight on the new column changes the logits of legal moves
        net.feat.bias[-1] = 5.0
    moved = np.where(mask, net.numpy_policy().logits(x) - after.logits(x), 0.0)
    assert np.abs(moved).max() > 0.1


def test_a_ten_feature_run_trains_saves_and_plays(tmp_path: Path) -> None:
    run = tmp_path / "run10"
    assert main(["train", "--run-dir", str(run), *TINY, "--total-steps", "128",
                 "--features", "10"]) == 0
    card = json.loads((run / "final" / "card.json").read_text())
    assert card["policy"]["features"] == list(FEATURES[:10]) and FEATURES[9] == "counter"
    assert card["policy"]["kind"] == "action_features/2"
    policy = NumpyPolicy.load(run / "final" / "policy.npz")
    assert policy.n_features == COUNTER_FEATURES  # type: ignore[attr-defined]
    wrong = dict(policy.arrays(), kind=np.array("action_features/1"))
    with pytest.raises(ValueError, match="reads 9 features, but its weights have 10"):
        NumpyPolicy.from_arrays(wrong)
    rules = make_rules("all_fives", players=2)
    agent = make_agent(f"ckpt:{run / 'final'}", seed=0)
    assert play_game(rules, [agent, make_agent("heuristic", seed=1)], seed=3,
                     log=False).game_over
    # a 10-feature learner against a 9-feature checkpoint and itself, batched
    nine = tmp_path / "run9"
    assert main(["train", "--run-dir", str(nine), *TINY, "--total-steps", "128"]) == 0
    env = AllFivesVectorEnv(rules, num_envs=6, seed=0, action_features=COUNTER_FEATURES,
                            opponents=[{"agent": f"ckpt:{nine / 'final'}"}, {"agent": "self"}])
    env.set_self(policy.arrays())
    obs, infos = env.reset(seed=0)
    assert obs.shape == (6, OBS_SIZE + N_ACTIONS * COUNTER_FEATURES)
    for _ in range(60):
        obs, *_rest, infos = env.step(infos["action_mask"].argmax(1))
    assert make_batched_bot(f"ckpt:{nine / 'final'}").policy.n_features == BASE_FEATURES
    # widening a 9-feature checkpoint in a config: the start plays as the checkpoint
    cfg = load_config(DMC, {"init_from": str(nine / "final"), "features": 10})
    widened = make_net(cfg).numpy_policy()
    x, _mask = _inputs(60)
    start = NumpyPolicy.load(nine / "final" / "policy.npz")
    np.testing.assert_allclose(widened.logits(x), start.logits(_first9(x)), rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(ValueError, match="can be widened, not narrowed"):
        make_net(load_config(DMC, {"init_from": str(run / "final"), "features": 9}))
    # labels for a 10-feature student carry its 10 columns
    labeller = Labeller(3, "search:sims=8,min_worlds=2", policy, 0.5)
    play_game(rules, [labeller, labeller], 4, log=False)
    assert labeller.arrays()["feat"].shape[-1] == COUNTER_FEATURES
    np.savez(tmp_path / "shard_000000.npz", **labeller.arrays())
    assert load_shards([tmp_path / "shard_000000.npz"], COUNTER_FEATURES)["feat"].shape[-1] == 10
    with pytest.raises(ValueError, match="carries 10 per-action features, the student reads 9"):
        load_shards([tmp_path / "shard_000000.npz"], BASE_FEATURES)


@pytest.mark.parametrize("value,policy", [(11, "action_features"), (8, "action_features"),
                                          (10, "mlp")])
def test_the_features_field_is_checked(value: object, policy: str) -> None:
    allowed = ", ".join(map(str, FEATURE_COUNTS))
    with pytest.raises(ValueError, match=rf"config features=.*: must be null or one of "
                                         rf"{allowed}, with policy action_features"):
        load_config(CONFIG, {"features": value, "policy": policy})
    with pytest.raises(ValueError, match="config features=True: expected int"):
        load_config(CONFIG, {"features": True})
