"""The RLlib backend with ``engine: batched`` (train/rllib/batched_env.py, batched.py): the env
runner's vector env keeps the batched games' rewards and gives RLlib next-step autoreset
(a finished game's last observation, then the new game's first with reward 0 and the action
ignored); bad batched fields get one line; and (slow: it starts Ray) a tiny run writes
checkpoints that play as ``ckpt:`` (data only), that the ``rllib:`` agent sends there in one
line, and that ``--resume`` continues."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_train.games.vector_env import AllFivesVectorEnv  # noqa: E402
from allfives_train.rllib.batched_env import RLlibVectorEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "train" / "rllib.yaml"  # the default of --backend rllib


def play(env: RLlibVectorEnv, steps: int, seed: int = 0) -> list[tuple]:
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out = []
    for _ in range(steps):
        legal = obs["action_mask"] > 0
        acts = np.array([rng.choice(np.flatnonzero(row)) for row in legal])
        was = env.pending.copy()
        obs, reward, term, trunc, info = env.step(acts)
        out.append((was, obs, reward, term | trunc))
    return out


def test_next_step_autoreset_holds_the_new_game_back_one_step() -> None:
    inner = AllFivesVectorEnv(make_rules(), 6, [{"agent": "greedy", "weight": 1.0}], seed=3,
                              action_features=17)
    env = RLlibVectorEnv(inner)
    ends = 0
    previous_done = np.zeros(6, dtype=bool)
    for was, obs, reward, done in play(env, 300):
        assert np.array_equal(was, previous_done)  # the games that ended last step wait
        assert (reward[was] == 0).all() and not done[was].any()
        assert obs["observations"].shape == (6, env.single_observation_space[
            "observations"].shape[0])
        assert set(np.unique(obs["action_mask"])) <= {0.0, 1.0}
        previous_done = done
        ends += int(done.sum())
    assert ends >= 6


def test_the_episode_returns_are_the_batched_envs() -> None:
    """Summed per game, the rewards RLlib sees are the inner env's episode returns."""
    inner = AllFivesVectorEnv(make_rules(), 4, [{"agent": "heuristic", "weight": 1.0}], seed=1)
    env = RLlibVectorEnv(inner)
    told: list[float] = []
    step = inner.step

    def recording(actions: np.ndarray, skip: np.ndarray | None = None) -> tuple:
        out = step(actions, skip=skip)
        info = out[4].get("final_info")
        if info is not None:
            told.extend(float(r) for r in info["return"][info["_return"]])
        return out

    inner.step = recording  # type: ignore[method-assign]
    running, seen = np.zeros(4), []
    for _was, _obs, reward, done in play(env, 400, seed=1):
        running += reward
        for b in np.flatnonzero(done):
            seen.append(running[b])
            running[b] = 0.0
    assert len(seen) >= 4 and sorted(np.round(seen, 9)) == sorted(np.round(told, 9))


@pytest.mark.parametrize("overrides, says", [
    ({"rllib_engine": "gpu"}, "rllib_engine='gpu': must be one of scalar, batched"),
    ({"rllib_engine": "batched", "rllib_bc_teacher": "heuristic"}, "rllib_bc_teacher"),
    ({"rllib_engine": "batched", "opponents": []}, "rllib_policy"),
    ({"rllib_engine": "batched", "features": 99}, "features"),
    ({"rllib_engine": "batched", "features": None}, "features"),
    ({"rllib_engine": "batched", "feature_temperature": 0}, "feature_temperature"),
    ({"rllib_engine": "scalar", "action_view": "facts", "features": None,
      "feature_start": "zero"}, "action_view='facts': is for rllib.engine batched"),
    ({"rllib_engine": "batched", "action_view": "facts", "features": None},
     "feature_start='heuristic'"),
    ({"rllib_engine": "batched", "init_from": "all_fives_3p"}, "trained for 3 seats"),
    ({"rllib_engine": "batched", "init_from": "/nonexistent"}, "not found"),
    ({"rllib_engine": "batched", "init_from": "all_fives_2p", "action_view": "facts",
      "features": None, "feature_start": "zero"}, "its actor reads the registered features"),
    ({"rllib_engine": "scalar", "init_from": "all_fives_2p"},
     "init_from='all_fives_2p': is for rllib.engine batched")])
def test_bad_batched_fields_are_refused(overrides: dict, says: str) -> None:
    from allfives_train.config import load_config

    with pytest.raises(ValueError, match=says):
        load_config(CONFIG, overrides)


TINY = ["train", "--backend", "rllib", "--config", str(CONFIG), "--num-envs-per-env-runner",
        "8", "--train-batch-size", "256", "--minibatch-size", "128", "--num-env-runners", "0",
        "--rllib-checkpoint-every", "1", "--quiet"]


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_a_batched_run_plays_as_ckpt_and_resumes(tmp_path: Path, capsys) -> None:
    pytest.importorskip("ray.rllib")
    from allfives.cli import main

    run = tmp_path / "run"
    assert main([*TINY, "--iterations", "1", "--run-dir", str(run)]) == 0
    card = json.loads((run / "final" / "card.json").read_text())
    assert card["policy"]["kind"].startswith("action_features/")
    assert len(card["policy"]["features"]) == 17
    assert main(["eval", "--agents", f"ckpt:{run / 'final'}", "greedy", "--games", "4",
                 "--workers", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["eval", "--agents", f"rllib:{run / 'final'}", "greedy", "--games", "2",
                 "--workers", "1", "--no-progress", "--trust-checkpoint"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "plays as ckpt:" in err[0]
    assert main([*TINY, "--iterations", "2", "--run-dir", str(run), "--resume"]) == 0
    rllib_card = json.loads((run / "final" / "allfives_rllib.json").read_text())
    assert rllib_card["iteration"] == 2 and rllib_card["engine"] == "batched"


def test_a_batched_actor_may_read_an_action_view_from_zero() -> None:
    from allfives_train.config import load_config
    from allfives_train.rllib.batched import env_config, module_config

    cfg = load_config(CONFIG, {"action_view": "facts", "features": None,
                               "feature_start": "zero"})
    assert module_config(cfg)["action_view"] == env_config(cfg)["action_view"] == "facts"
    assert module_config(cfg)["feature_start"] == "zero"


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_a_batched_run_over_facts_exports_an_action_view_actor(tmp_path: Path) -> None:
    pytest.importorskip("ray.rllib")
    from allfives.cli import main

    run = tmp_path / "facts"
    assert main([*TINY, "--iterations", "1", "--run-dir", str(run), "--action-view", "facts",
                 "--features", "null", "--feature-start", "zero"]) == 0
    card = json.loads((run / "final" / "card.json").read_text())
    assert card["policy"]["kind"] == "action_view/facts"
    assert card["config"]["actor"]["action_view"] == "facts"
    assert main(["eval", "--agents", f"ckpt:{run / 'final'}", "greedy", "--games", "4",
                 "--workers", "1", "--no-progress"]) == 0
