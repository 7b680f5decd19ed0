"""The fast path (``algo: ppo_batched``): its config, its pieces, and a tiny run end to end
that writes a ``ckpt:`` checkpoint, plays it, and resumes. No GPU needed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from allfives.cli import main  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_env.game.match import play_game  # noqa: E402
from allfives_env.game.observation import OBS_SIZE  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.tiles import N_ACTIONS  # noqa: E402
from allfives_train.algorithms.ppo_batched.net import ActorCritic, log_prob_entropy, resolve_device  # noqa: E402
from allfives_train.algorithms.ppo_batched.trainer import gae, update  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, MASKABLE_CONFIG, load_config  # noqa: E402
from allfives_train.games.vector_fallback import ScalarLoopVectorEnv  # noqa: E402

FAST = DEFAULT_CONFIG.parent / "fast_2p.yaml"
TINY = ["--config", str(FAST), "--engine", "scalar", "--device", "cpu", "--n-envs", "4",
        "--n-steps", "16", "--batch-size", "32", "--n-epochs", "1", "--net-arch", "16", "16",
        "--eval-games", "4", "--eval-every", "64", "--checkpoint-every", "64",
        "--snapshot-every", "64", "--eval-opponents", "random", "greedy",
        "--best-metric", "greedy", "--quiet"]


def train(run_dir: Path, *extra: str) -> int:
    return main(["train", "--run-dir", str(run_dir), *TINY, *extra])


# ---------------------------------------------------------------------------- config
def test_fast_config_loads_and_default_stays_maskable_ppo() -> None:
    cfg = load_config(FAST)
    assert cfg.algo == "ppo_batched" and cfg.value("bc_teacher") is None
    assert load_config(MASKABLE_CONFIG).algo == "maskable_ppo"


@pytest.mark.parametrize("overrides, message", [
    ({"algo": "dqn"}, "algo='dqn': must be one of maskable_ppo, ppo_batched"),
    ({"device": "tpu"}, "device='tpu': must be cpu, cuda or auto"),
    ({"engine": "gpu"}, "engine='gpu': must be auto, batched or scalar"),
    ({"precision": "fp16"}, "precision='fp16': must be fp32 or bf16"),
    ({"algo": "ppo_batched"},
     "bc_teacher='heuristic': algo ppo_batched has no imitation warm start"),
    ({"algo": "ppo_batched", "bc_teacher": None, "init_from": "x"}, "init_from='x'"),
])
def test_bad_fast_fields_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        load_config(MASKABLE_CONFIG, overrides)


def test_bad_field_on_the_command_line_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    assert train(tmp_path / "x", "--algo", "sac") == 2
    err = capsys.readouterr().err.strip()
    assert "algo='sac'" in err and "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_device_resolution() -> None:
    assert resolve_device("cpu").type == "cpu"
    if torch.cuda.is_available():
        assert resolve_device("auto").type == "cuda"
    else:
        assert resolve_device("auto").type == "cpu"
        with pytest.raises(ValueError, match="no CUDA device"):
            resolve_device("cuda")


# ---------------------------------------------------------------------------- pieces
def test_fallback_vector_env_api() -> None:
    rules = make_rules("all_fives", players=2)
    env = ScalarLoopVectorEnv(rules, 3, [{"agent": "greedy", "weight": 1.0}], seed=1)
    obs, infos = env.reset(seed=1)
    assert obs.shape == (3, OBS_SIZE) and obs.dtype == np.float32
    mask = infos["action_mask"]
    assert mask.shape == (3, N_ACTIONS) and mask.dtype == bool and mask.any(1).all()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):  # several whole games: same-step autoreset keeps masks legal
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, reward, term, trunc, infos = env.step(actions)
        mask = infos["action_mask"]
        assert mask.any(1).all() and np.array_equal(mask, env.action_masks())
        ended += int((term | trunc).sum())
        if (term | trunc).any():
            assert np.array_equal(infos["_final_obs"], term | trunc)
            assert np.array_equal(infos["final_info"]["_won"], term | trunc)
            for b in np.flatnonzero(term | trunc):
                assert infos["final_obs"][b].shape == (OBS_SIZE,)
                assert infos["episode"]["l"][b] >= 1
    assert ended > 0


def test_bf16_network_gives_float32_outputs_close_to_fp32() -> None:
    torch.manual_seed(0)
    agent = ActorCritic(OBS_SIZE, N_ACTIONS, [8, 8], "relu", precision="bf16")
    x = torch.rand((5, OBS_SIZE))
    mask = torch.ones((5, N_ACTIONS), dtype=torch.bool)
    logits, value = agent.logits(x, mask), agent.value(x)
    assert logits.dtype == torch.float32 and value.dtype == torch.float32
    agent.bf16 = False
    torch.testing.assert_close(logits, agent.logits(x, mask), atol=0.05, rtol=0.05)


def test_numpy_export_matches_the_torch_actor() -> None:
    agent = ActorCritic(OBS_SIZE, N_ACTIONS, [8, 8], "tanh")
    x = np.random.default_rng(0).random((5, OBS_SIZE), dtype=np.float32)
    mask = torch.ones((5, N_ACTIONS), dtype=torch.bool)
    with torch.no_grad():
        ours = agent.logits(torch.as_tensor(x), mask).numpy()
    np.testing.assert_allclose(agent.numpy_policy().logits(x), ours, rtol=1e-5, atol=1e-6)


def test_gae_does_not_bootstrap_across_a_finished_game() -> None:
    agent = ActorCritic(OBS_SIZE, N_ACTIONS, [4], "relu")
    for p in agent.critic.parameters():
        torch.nn.init.zeros_(p)  # every value 0: advantages are discounted rewards
    buf = {"rewards": torch.tensor([[1.0], [0.0], [2.0]]),
           "values": torch.zeros((3, 1)), "dones": torch.tensor([[0.0], [1.0], [0.0]])}
    adv, ret = gae(buf, agent, np.zeros((1, OBS_SIZE), np.float32), 0.5, 1.0,
                   torch.device("cpu"))
    np.testing.assert_allclose(adv[:, 0].numpy(), [1.0, 0.0, 2.0])
    np.testing.assert_allclose(ret.numpy(), adv.numpy())


def test_an_update_raises_the_probability_of_the_advantaged_action() -> None:
    torch.manual_seed(0)
    cfg = load_config(FAST, {"n_epochs": 4, "batch_size": 64, "ent_coef": 0.0})
    agent = ActorCritic(OBS_SIZE, N_ACTIONS, [16], "relu")
    opt = torch.optim.Adam(agent.parameters(), lr=1e-2)
    n = 64
    obs = torch.rand((n, 1, OBS_SIZE))
    mask = torch.zeros((n, 1, N_ACTIONS), dtype=torch.bool)
    mask[..., :2] = True
    actions = torch.tensor([0, 1] * (n // 2)).reshape(n, 1)
    with torch.no_grad():
        logp0, _ = log_prob_entropy(agent.logits(obs[:, 0], mask[:, 0]), actions[:, 0])
    adv = torch.where(actions == 0, 1.0, -1.0)
    buf = {"obs": obs, "mask": mask, "actions": actions, "logp": logp0[:, None]}
    update(agent, opt, buf, adv, torch.zeros((n, 1)), cfg)
    with torch.no_grad():
        p = torch.softmax(agent.logits(obs[:, 0], mask[:, 0]), -1)[:, 0]
    assert float(p.mean()) > 0.6 and float(logp0.exp().mean()) < 0.55


# ---------------------------------------------------------------------------- end to end
def card(path: Path) -> dict:
    return json.loads((path / "card.json").read_text())


@pytest.mark.slow
def test_tiny_fast_run_checkpoint_plays_and_resumes(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    assert train(run, "--total-steps", "128") == 0
    first = card(run / "final")
    assert first["steps"] == 128 and first["config"]["algo"] == "ppo_batched"
    assert "own masked PPO" in first["algo"]
    for name in ("policy.npz", "trainer.pt", "card.md", "config.yaml"):
        assert (run / "final" / name).is_file()
    assert (run / "latest.txt").read_text().strip() == "step_000000000128"
    assert len(list((run / "snapshots").glob("snap_*.npz"))) == 2

    agent = make_agent(f"ckpt:{run / 'final'}")
    rules = make_rules("all_fives", players=2)
    state = play_game(rules, [agent, make_agent("greedy", seed=1)], seed=3, log=False)
    assert state.game_over

    assert train(run, "--total-steps", "256", "--resume") == 0  # continues, not restarts
    second = card(run / "final")
    assert second["steps"] == 256
    assert [h["steps"] for h in second["eval_history"]] == [0, 64, 128, 192, 256]
    assert train(run, "--total-steps", "256") == 2  # not over an existing run
    assert "holds a finished run" in capsys.readouterr().err  # (256 of 256 steps)
    assert train(run, "--total-steps", "320") == 2  # one it could train further: --resume
    assert "already holds a run" in capsys.readouterr().err


@pytest.mark.slow
def test_fast_run_with_network_and_snapshot_opponents(tmp_path: Path) -> None:
    first = tmp_path / "first"
    assert train(first, "--total-steps", "64") == 0
    ckpt = f"ckpt:{first / 'final'}"
    other = tmp_path / "other"
    assert train(other, "--total-steps", "128", "--opponents", f"{ckpt}@1", "self@1",
                 "snapshots@1", "--players", "2") == 0
    assert card(other / "final")["steps"] == 128


def test_resume_of_a_fast_run_needs_its_trainer_state(tmp_path: Path, capsys) -> None:
    assert train(tmp_path / "empty", "--resume") == 2
    assert "no checkpoint to resume" in capsys.readouterr().err


def test_tiny_fast_run_on_the_batched_engine(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    run = tmp_path / "batched"
    assert train(run, "--engine", "batched", "--total-steps", "128", "--opponents", "self@1",
                 "snapshots@1", "heuristic@1") == 0
    assert card(run / "final")["steps"] == 128
    assert train(run, "--engine", "batched", "--total-steps", "192", "--resume") == 0
    assert card(run / "final")["steps"] == 192


@pytest.mark.slow
def test_four_seat_teams_fast_run(tmp_path: Path) -> None:
    run = tmp_path / "teams"
    assert train(run, "--players", "4", "--total-steps", "64", "--engine", "auto") == 0
    c = card(run / "final")
    assert c["players"] == 4 and c["teams"] is True


def test_timed_learn_for_the_bench_counts_whole_rollouts() -> None:
    from allfives_train.algorithms.ppo_batched.trainer import timed_learn

    cfg = load_config(FAST, {"engine": "scalar", "device": "cpu", "n_envs": 4, "n_steps": 8,
                             "batch_size": 16, "n_epochs": 1, "net_arch": [8]})
    steps, wall, cpu = timed_learn(cfg, 40)
    assert steps == 64 and wall > 0 and cpu > 0  # 2 rollouts of 32 after the warm-up


@pytest.mark.slow
def test_ctrl_c_saves_a_checkpoint_and_resume_continues(tmp_path: Path, monkeypatch,
                                                        capsys) -> None:
    import allfives_train.algorithms.ppo_batched.trainer as fastppo

    real, calls = fastppo.update, []

    def interrupted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(fastppo, "update", interrupted)
    run = tmp_path / "stopped"
    assert train(run, "--total-steps", "256", "--checkpoint-every", "1000") == 130
    assert "interrupted at 128 steps" in capsys.readouterr().err
    assert (run / "latest.txt").read_text().strip() == "step_000000000128"
    monkeypatch.setattr(fastppo, "update", real)
    assert train(run, "--total-steps", "256", "--resume") == 0
    assert card(run / "final")["steps"] == 256


def test_lambda_returns_mix_in_the_values_that_follow() -> None:
    """lambda 1: the discounted rewards; lambda 0: r + gamma V(s'); between, the mixture."""
    agent = ActorCritic(OBS_SIZE, N_ACTIONS, [4], "relu")
    for p in agent.critic.parameters():
        torch.nn.init.zeros_(p)  # V of the state after the rollout: 0
    buf = {"rewards": torch.tensor([[1.0], [0.0], [2.0]]),
           "values": torch.tensor([[0.5], [4.0], [1.0]]), "dones": torch.zeros((3, 1))}
    returns = {lam: gae(buf, agent, np.zeros((1, OBS_SIZE), np.float32), 0.5, lam,
                        torch.device("cpu"))[1][:, 0].numpy() for lam in (1.0, 0.0, 0.5)}
    np.testing.assert_allclose(returns[1.0], [1.5, 1.0, 2.0])
    np.testing.assert_allclose(returns[0.0], [1.0 + 0.5 * 4.0, 0.5 * 1.0, 2.0])
    g1 = 0.0 + 0.5 * (0.5 * 1.0 + 0.5 * 2.0)
    np.testing.assert_allclose(returns[0.5], [1.0 + 0.5 * (0.5 * 4.0 + 0.5 * g1), g1, 2.0])
