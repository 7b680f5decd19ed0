"""Deep Monte-Carlo (``algo: dmc``): acting, the action values, the regression, the config
checks and a tiny run that starts from a shipped checkpoint, plays as ``ckpt:`` and resumes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from allfives.cli import main  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_env.game.match import play_game  # noqa: E402
from allfives_env.game.observation import OBS_SIZE  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.tiles import N_ACTIONS  # noqa: E402
from allfives_train.algorithms.dmc import trainer as dmc  # noqa: E402
from allfives_train.algorithms.ppo_batched.net import epsilon_greedy, make_agent_net  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, load_config  # noqa: E402

DMC = DEFAULT_CONFIG.parent / "dmc_2p.yaml"
TINY = ["--config", str(DMC), "--device", "cpu", "--n-envs", "8", "--n-steps", "16",
        "--batch-size", "64", "--n-epochs", "1", "--eval-games", "4", "--eval-every", "128",
        "--checkpoint-every", "128", "--snapshot-every", "128", "--quiet"]
N_FEAT = 9


def train(run_dir: Path, *extra: str) -> int:
    return main(["train", "--run-dir", str(run_dir), *TINY, *extra])


def batch(rows: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Random observations with random features and random masks (each row >= 2 legal)."""
    g = torch.Generator().manual_seed(seed)
    obs = torch.rand((rows, OBS_SIZE + N_ACTIONS * N_FEAT), generator=g)
    mask = torch.rand((rows, N_ACTIONS), generator=g) < 0.05
    mask[:, :2] = True
    return obs, mask


def net() -> torch.nn.Module:
    torch.manual_seed(0)
    return make_agent_net("action_features", OBS_SIZE, N_ACTIONS, [16, 16], "relu")


def test_acting_is_the_argmax_or_a_legal_random_move() -> None:
    agent = net()
    obs, mask = batch(300)
    greedy = epsilon_greedy(agent, obs, mask, 0.0)
    assert torch.equal(greedy, agent.logits(obs, mask).argmax(-1))
    explored = epsilon_greedy(agent, obs, mask, 1.0)
    assert bool(mask.gather(1, explored[:, None]).all())  # only legal moves
    assert (explored != greedy).float().mean() > 0.3  # and not the argmax


def test_action_values_are_the_critic_plus_the_centred_scaled_logit() -> None:
    agent = net()
    obs, mask = batch(5)
    actions = epsilon_greedy(agent, obs, mask, 1.0)
    q = dmc.q_taken(agent, obs, mask, actions, 0.5)
    z = agent.logits(obs, mask)
    for i in range(5):
        legal = z[i][mask[i]]
        expect = agent.value(obs[i:i + 1])[0] + 0.5 * (z[i, actions[i]] - legal.mean())
        assert torch.isclose(q[i], expect, atol=1e-5)


def test_the_regression_raises_the_move_that_returned_more() -> None:
    """Two legal moves, the first returned +1 and the second -1 from the same position: after
    the update the first has the higher logit, whatever the start."""
    agent = net()
    obs, mask = batch(1, seed=3)
    mask[:] = False
    mask[0, :2] = True
    obs, mask = obs.repeat(64, 1), mask.repeat(64, 1)
    actions = torch.tensor([0, 1] * 32)
    buf = {"obs": obs[None], "mask": mask[None], "actions": actions[None]}
    returns = torch.where(actions == 0, 1.0, -1.0)[None]
    cfg = load_config(DMC, {"n_epochs": 50, "batch_size": 64})
    optimizer = torch.optim.Adam(agent.parameters(), lr=3e-3)

    def error() -> float:
        with torch.no_grad():
            return float(((dmc.q_taken(agent, obs, mask, actions, 0.1) - returns[0]) ** 2).mean())

    before = error()
    dmc.update(agent, optimizer, buf, returns, cfg, 0.1)
    z = agent.logits(obs[:1], mask[:1])[0]
    assert z[0] > z[1] and error() < 0.1 < before


@pytest.mark.parametrize("overrides, message", [
    ({"policy": "mlp", "features": None}, "move_head=64: is for policy action_features"),
    ({"engine": "scalar"}, "engine='scalar': algo dmc runs on the batched engine"),
    ({"bc_teacher": "heuristic"}, "bc_teacher='heuristic': algo dmc has no imitation"),
    ({"dmc_epsilon": 1.5}, "dmc_epsilon=1.5: must be a number in [0, 1]"),
    ({"dmc_scale": -1}, "dmc_scale=-1.0: must be a number > 0"),
    ({"dmc_lambda": 1.2}, "dmc_lambda=1.2: must be a number in [0, 1]"),
    ({"init_from": "checkpoints/all_fives_3p"}, "trained for 3 seats"),
    ({"move_head": -1}, "move_head=-1: must be an integer >= 0"),
    ({"move_head": 1.5}, "move_head=1.5: expected"),
])
def test_bad_dmc_fields_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_config(DMC, overrides)


def test_a_move_head_is_only_for_the_action_features_actor() -> None:
    with pytest.raises(ValueError, match="move_head=8: is for policy action_features"):
        load_config(DEFAULT_CONFIG.parent / "fast_2p.yaml", {"move_head": 8})


def test_bad_field_on_the_command_line_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    assert train(tmp_path / "x", "--dmc-epsilon", "-1") == 2
    err = capsys.readouterr().err.strip()
    assert "dmc_epsilon=-1" in err and "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_anneal_lr_is_for_the_fast_path_only() -> None:
    """The fast path's section: search_distill does not read it, and says so."""
    from allfives_train.config import ignored_note

    note = ignored_note(load_config(DEFAULT_CONFIG.parent / "distill_2p.yaml",
                                    {"anneal_lr": True}))
    assert note is not None and "does not read anneal_lr=True" in note
    fast = load_config(DEFAULT_CONFIG.parent / "fast_2p.yaml", {"anneal_lr": True})
    assert fast.value("anneal_lr")


@pytest.mark.slow
def test_anneal_lr_steps_the_learning_rate_down_a_line_to_zero(tmp_path: Path) -> None:
    """Updates at steps 0, 128, 256 of 384: the last one at lr * (1 - 256 / 384)."""
    run = tmp_path / "run"
    assert train(run, "--total-steps", "384", "--anneal-lr", "--learning-rate", "0.0003") == 0
    saved = torch.load(run / "final" / "trainer.pt", weights_only=True)["optimizer"]
    assert saved["param_groups"][0]["lr"] == pytest.approx(3e-4 * (1 - 256 / 384))
    plain = tmp_path / "plain"
    assert train(plain, "--total-steps", "128", "--learning-rate", "0.0003") == 0
    saved = torch.load(plain / "final" / "trainer.pt", weights_only=True)["optimizer"]
    assert saved["param_groups"][0]["lr"] == pytest.approx(3e-4)
    assert train(plain, "--total-steps", "256", "--learning-rate", "0.0001", "--resume") == 0
    saved = torch.load(plain / "final" / "trainer.pt", weights_only=True)["optimizer"]
    assert saved["param_groups"][0]["lr"] == pytest.approx(1e-4)  # the resumed config's


def card(path: Path) -> dict:
    return json.loads((path / "card.json").read_text())


@pytest.mark.slow
def test_tiny_dmc_run_starts_from_its_checkpoint_plays_and_resumes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    start_from = Path(__file__).parent / "fixtures" / "checkpoints" / "ppo_all_fives_2p"
    assert train(run, "--total-steps", "256", "--init-from", str(start_from),
                 "--features", "9") == 0
    first = card(run / "final")
    assert first["steps"] == 256 and first["config"]["algo"] == "dmc"
    assert "Deep Monte-Carlo" in first["algo"]
    text = (run / "final" / "card.md").read_text()
    assert "Deep Monte-Carlo learner steps" in text and "PPO" not in text
    start = np.load(Path(first["config"]["init_from"]) / "policy.npz")
    trained = np.load(run / "final" / "policy.npz")
    assert str(start["kind"]) == "action_features/1"
    assert str(trained["kind"]) == "action_features_head/1"  # the config's move_head added
    assert not np.array_equal(trained["feat_b"], start["feat_b"])  # and the update moved it
    assert np.abs(trained["head_u"]).max() > 0  # the head too, from 0
    agent = make_agent(f"ckpt:{run / 'final'}")
    state = play_game(make_rules("all_fives", players=2), [agent, make_agent("greedy")],
                      seed=3, log=False)
    assert state.game_over
    assert train(run, "--total-steps", "384", "--resume", "--init-from", str(start_from),
                 "--features", "9") == 0
    assert [h["steps"] for h in card(run / "final")["eval_history"]] == [0, 128, 256, 384]


@pytest.mark.slow
def test_dmc_lambda_is_the_lambda_of_the_returns(tmp_path: Path, monkeypatch) -> None:
    seen: list[float] = []
    real = dmc.gae

    def spy(buf, agent, next_obs, gamma, lam, device):  # type: ignore[no-untyped-def]
        seen.append(lam)
        return real(buf, agent, next_obs, gamma, lam, device)

    monkeypatch.setattr(dmc, "gae", spy)
    assert train(tmp_path / "run", "--total-steps", "256", "--dmc-lambda", "0.7") == 0
    assert seen and set(seen) == {0.7}
    assert card(tmp_path / "run" / "final")["config"]["dmc"]["td_lambda"] == 0.7


def test_a_per_move_head_starts_silent_and_exports_exactly() -> None:
    """``move_head``: the head's output weights start at 0 (same logits as without it); once
    they are not, the numpy export (kind action_features_head/1) computes the torch logits and
    a saved file loads back with its head."""
    from allfives_agents.trained.policy_numpy import NumpyPolicy
    from allfives_train.algorithms.ppo_batched.net import actor_from

    agent = net()
    obs, mask = batch(6)
    before = agent.logits(obs, mask).detach()
    agent.add_head(8)
    assert torch.equal(agent.logits(obs, mask).detach(), before)
    with torch.no_grad():
        agent.head["head_u"].normal_()
    z = agent.logits(obs, mask).detach()
    assert not torch.allclose(z, before)
    exported = agent.numpy_policy()
    assert str(exported.arrays()["kind"]) == "action_features_head/1"
    legal = mask.numpy()
    np.testing.assert_allclose(exported.logits(obs.numpy())[legal], z.numpy()[legal],
                               rtol=1e-4, atol=1e-4)
    again = NumpyPolicy.from_arrays(exported.arrays())
    np.testing.assert_array_equal(again.logits(obs.numpy()), exported.logits(obs.numpy()))
    back = actor_from(again)
    np.testing.assert_allclose(back.logits(obs, mask).detach().numpy()[legal],
                               z.numpy()[legal], rtol=1e-4, atol=1e-4)


def test_a_head_whose_arrays_do_not_fit_is_refused() -> None:
    from allfives_agents.trained.policy_numpy import NumpyPolicy

    agent = net()
    agent.add_head(8)
    arrays = agent.numpy_policy().arrays()
    arrays["head_f"] = arrays["head_f"][:, :5]
    with pytest.raises(ValueError, match="per-move head arrays do not match"):
        NumpyPolicy.from_arrays(arrays)
    del arrays["head_f"]
    with pytest.raises(ValueError, match="lack 'head_f'"):
        NumpyPolicy.from_arrays(arrays)


def test_the_numpy_head_equals_its_dense_formula_on_every_move() -> None:
    """The numpy head computes the moves with all-zero features (illegal ones) once per row;
    every logit, legal or not, equals the dense ``relu(h H + F[a] Hf + b) u``."""
    agent = net()
    agent.add_head(8)
    with torch.no_grad():
        agent.head["head_u"].normal_()
        agent.head["head_b"].normal_()
    policy = agent.numpy_policy()
    obs, mask = batch(7, seed=5)
    x = obs.numpy().copy()
    f = x[:, OBS_SIZE:].reshape(7, N_ACTIONS, N_FEAT)
    f[~mask.numpy()] = 0.0  # as the env writes them: illegal moves have zero rows
    x[:, OBS_SIZE:] = f.reshape(7, -1)
    h = policy.hidden(x[:, :OBS_SIZE])
    p = policy.head
    dense = np.maximum((h @ p["head_h"])[:, None, :] + f @ p["head_f"] + p["head_b"], 0)
    without = agent.numpy_policy()
    without.head = None
    np.testing.assert_allclose(policy.logits(x) - without.logits(x), dense @ p["head_u"],
                               rtol=1e-5, atol=1e-5)
