"""The heuristic-residual policy (``policy: action_features``): the torch net and its numpy
export agree, the untrained policy plays the heuristic's moves, checkpoints of this kind
load and play through ``ckpt:`` (scalar) and as batched/``self`` opponents, and a tiny run
trains end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from test_batched_bots import _positions  # noqa: E402

from allfives.cli import main  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.batched.bots import make_batched_bot  # noqa: E402
from allfives_agents.features.action_features import BASE_FEATURES, action_features  # noqa: E402
from allfives_agents.trained.policy_numpy import NumpyPolicy, ResidualPolicy  # noqa: E402
from allfives_env.game.match import play_game  # noqa: E402
from allfives_env.game.observation import OBS_SIZE, observe  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.tiles import N_ACTIONS  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402
from allfives_train.algorithms.ppo_batched.net import make_agent_net  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, MASKABLE_CONFIG, load_config  # noqa: E402
from allfives_train.games.vector_env import AllFivesVectorEnv  # noqa: E402

CONFIG = DEFAULT_CONFIG.parent / "residual_2p.yaml"
TINY = ["--config", str(CONFIG), "--device", "cpu", "--n-envs", "8", "--n-steps", "16",
        "--batch-size", "64", "--n-epochs", "1", "--net-arch", "16", "16", "--eval-games",
        "4", "--eval-every", "128", "--checkpoint-every", "128", "--snapshot-every", "64",
        "--eval-opponents", "greedy", "--best-metric", "greedy", "--quiet"]


def _net(seed: int = 0, temperature: float = 1.0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return make_agent_net("action_features", OBS_SIZE, N_ACTIONS, [32, 32], "relu",
                          temperature=temperature)


def _inputs(n: int) -> tuple[np.ndarray, np.ndarray, list[SeatView]]:
    rows, masks, views = [], [], []
    for _games, states, live in _positions("all_fives", 2, False, n, seed=7):
        for b in live:
            st = states[b]
            view = SeatView.of(st, st.current)
            legal = list(view.legal)
            rows.append(np.concatenate([observe(st, st.current, legal),
                                        action_features(view, BASE_FEATURES).ravel()]))
            mask = np.zeros(N_ACTIONS, bool)
            mask[legal] = True
            masks.append(mask)
            views.append(view)
    return np.array(rows, np.float32), np.array(masks), views


def test_numpy_export_matches_torch_and_round_trips(tmp_path: Path) -> None:
    net = _net()
    with torch.no_grad():  # move off the heuristic start so that every term counts
        for p in net.parameters():
            p.add_(0.05 * torch.randn_like(p))
    x, mask, _ = _inputs(200)
    with torch.no_grad():
        want = net.logits(torch.as_tensor(x), torch.as_tensor(mask)).numpy()
    policy = net.numpy_policy()
    assert isinstance(policy, ResidualPolicy) and policy.needs_features
    assert policy.obs_size == OBS_SIZE + N_ACTIONS * BASE_FEATURES
    got = np.where(mask, policy.logits(x), -1e9)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    policy.save(tmp_path / "p.npz")
    back = NumpyPolicy.load(tmp_path / "p.npz")
    assert isinstance(back, ResidualPolicy)
    assert np.array_equal(back.logits(x[0]), policy.logits(x[0]))
    arrays = policy.arrays()
    arrays["kind"] = np.array("other/9")
    with pytest.raises(ValueError, match="policy kind 'other/9' unknown"):
        NumpyPolicy.from_arrays(arrays)


def test_untrained_policy_plays_like_the_heuristic() -> None:
    policy = _net(temperature=0.25).numpy_policy()
    heuristic = make_agent("heuristic", seed=0)
    x, mask, views = _inputs(600)
    picks = np.where(mask, policy.logits(x), -np.inf).argmax(axis=1)
    choice = [(len(v.legal) > 1, int(p) == heuristic.act({}, v)) for p, v in zip(picks, views,
                                                                                 strict=True)]
    real = [same for many, same in choice if many]
    assert len(real) > 150 and np.mean(real) > 0.9  # ties and the small base head aside


def test_zero_start_has_no_prior_and_is_refused_when_misspelt() -> None:
    """``feature_start: zero`` (the main job): no feature weight, so the untrained actor's
    logits ignore the features (nearly uniform play); any other value is refused."""
    torch.manual_seed(0)
    net = make_agent_net("action_features", OBS_SIZE, N_ACTIONS, [32, 32], "relu",
                         start="zero")
    assert not net.feat.bias.detach().any() and not net.feat.weight.detach().any()
    x, mask, _ = _inputs(100)
    blank = x.copy()
    blank[:, OBS_SIZE:] = 0.0  # the same positions with every feature zeroed
    policy = net.numpy_policy()
    assert np.array_equal(policy.logits(x), policy.logits(blank))
    spread = np.where(mask, policy.logits(x), np.nan)
    assert np.nanmax(np.abs(spread - np.nanmean(spread, axis=1, keepdims=True))) < 0.5
    assert load_config(DEFAULT_CONFIG.parent / "selfplay_2p.yaml").value("feature_start") == "zero"
    with pytest.raises(ValueError, match="feature_start='teacher': must be heuristic or zero"):
        load_config(DEFAULT_CONFIG, {"feature_start": "teacher"})


def test_vector_env_features_and_residual_opponents() -> None:
    rules = make_rules()
    arrays = _net().numpy_policy().arrays()
    env = AllFivesVectorEnv(rules, num_envs=8, seed=0, action_features=True,
                            opponents=[{"agent": "self"}, {"agent": "snapshots"}])
    env.set_self(arrays)
    env.add_snapshot(arrays, "s0")
    obs, infos = env.reset(seed=0)
    width = OBS_SIZE + N_ACTIONS * BASE_FEATURES
    assert obs.shape == (8, width) and env.single_observation_space.shape == (width,)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(120):
        feats = obs[:, OBS_SIZE:].reshape(8, N_ACTIONS, BASE_FEATURES)
        mask = infos["action_mask"]
        assert not feats[~mask].any() and np.abs(feats[mask]).sum(-1).all()  # pips or double
        obs, _r, term, trunc, infos = env.step((rng.random(mask.shape) * mask).argmax(1))
        ended += int((term | trunc).sum())
        if (term | trunc).any():
            b = int(np.flatnonzero(term | trunc)[0])
            assert infos["final_obs"][b].shape == (width,)
    assert ended > 0
    plain = AllFivesVectorEnv(rules, num_envs=2, seed=0)
    assert plain.reset(seed=0)[0].shape == (2, OBS_SIZE)


def test_config_field_and_tiny_run_play_as_ckpt(tmp_path: Path) -> None:
    assert load_config(MASKABLE_CONFIG).value("policy") == "mlp"
    with pytest.raises(ValueError, match="policy='cnn': must be mlp or action_features"):
        load_config(MASKABLE_CONFIG, {"policy": "cnn"})
    with pytest.raises(ValueError, match=r"feature_temperature=0(\.0)?: must be a number > 0"):
        load_config(CONFIG, {"feature_temperature": 0})
    with pytest.raises(ValueError, match="needs algo ppo_batched on the batched engine"):
        load_config(CONFIG, {"engine": "scalar"})
    run = tmp_path / "run"
    assert main(["train", "--run-dir", str(run), *TINY, "--total-steps", "128"]) == 0
    card = json.loads((run / "final" / "card.json").read_text())
    assert card["policy"]["kind"] == "action_features/1" and card["steps"] == 128
    agent = make_agent(f"ckpt:{run / 'final'}", seed=0)
    rules = make_rules("all_fives", players=2)
    assert play_game(rules, [agent, make_agent("heuristic", seed=1)], seed=3,
                     log=False).game_over
    assert make_batched_bot(f"ckpt:{run / 'final'}").policy.needs_features
