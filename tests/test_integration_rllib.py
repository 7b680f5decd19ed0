"""Ray RLlib end to end (the ``rllib`` extra): ``allfives train --backend rllib`` trains two
iterations on a small local Ray, its module plays in ``allfives eval`` as ``rllib:<path>``, a
mismatched table is refused, and self-play snapshots hold copies of ``main``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

import ray  # noqa: E402

from allfives.cli import main as allfives  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.trained.rllib_agent import CARD_NAME, RLlibAgent  # noqa: E402
from allfives_env.game.engine import GameState  # noqa: E402
from allfives_env.game.observation import action_mask, observe  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402
from allfives_env.inputs.trust import trusting  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, load_config  # noqa: E402

TABLE_CONFIG = DEFAULT_CONFIG.parent / "rllib_table.yaml"
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]  # one Ray per worker
# the multi-agent table env (the default config, engine batched: test_integration_rllib_batched.py)
TINY = ["--config", str(TABLE_CONFIG), "--iterations", "2", "--num-env-runners", "0",
        "--train-batch-size", "256",
        "--minibatch-size", "128", "--num-epochs", "1", "--net-arch", "32",
        "--rllib-checkpoint-every", "1", "--set", "target=60", "--rllib-bc-teacher", "null"]


@pytest.fixture(scope="module")
def local_ray():
    import torch

    torch.set_num_threads(1)
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def shared_run(local_ray, tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("rllib") / "shared"
    assert allfives(["train", "--backend", "rllib", *TINY, "--run-dir", str(run),
                     "--quiet"]) == 0
    return run


def test_train_writes_progress_and_checkpoints_with_a_card(shared_run: Path) -> None:
    rows = list(csv.DictReader(open(shared_run / "progress.csv")))
    assert [int(r["iteration"]) for r in rows] == [1, 2]
    assert float(rows[-1]["env_steps"]) >= 512
    for d in ("checkpoint_000001", "checkpoint_000002", "final"):
        card = json.loads((shared_run / d / CARD_NAME).read_text())
        assert card["players"] == 2 and card["policy"] == "shared"
        assert (shared_run / d / "learner_group" / "learner" / "rl_module" / "main").is_dir()
    assert json.loads((shared_run / "final" / CARD_NAME).read_text())["iteration"] == 2


def test_rllib_module_plays_in_allfives_eval(shared_run: Path, tmp_path: Path) -> None:
    """In a fresh process, as a user runs it: the rllib: prefix must resolve by itself."""
    out = tmp_path / "eval.json"
    done = subprocess.run(
        [sys.executable, "-m", "allfives.cli", "eval", "--agents", f"rllib:{shared_run}",
         "random", "--games", "4", "--workers", "1", "--no-progress", "--set", "target=60",
         "--json", str(out), "--trust-checkpoint"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"rllib:{shared_run}" in done.stdout
    summary = json.loads(out.read_text())
    assert f"rllib:{shared_run}" in json.dumps(summary)


def test_rllib_module_refuses_a_table_it_was_not_trained_for(shared_run: Path,
                                                             capsys: pytest.CaptureFixture
                                                             ) -> None:
    code = allfives(["eval", "--agents", f"rllib:{shared_run}", "random", "--players", "3",
                     "--games", "6", "--workers", "1", "--no-progress", "--trust-checkpoint"])
    assert code == 2
    assert "was trained for 2 seats; this game has 3 seats" in capsys.readouterr().err


def test_rllib_agent_plays_the_modules_best_legal_action(shared_run: Path) -> None:
    import torch

    with trusting():  # an RLlib checkpoint unpickles: this test's own run is trusted
        agent = make_agent(f"rllib:{shared_run}/final", seed=1)
    assert isinstance(agent, RLlibAgent)
    rules = make_rules(players=2)
    state = GameState(rules, np.random.default_rng(4))
    for _ in range(20):
        if state.hand_over:
            break
        seat = state.current
        view = SeatView.of(state, seat)
        obs = {"observation": observe(state, seat, list(view.legal)),
               "action_mask": action_mask(state)}
        a = agent.act(obs, view)
        assert a in view.legal
        batch = {"obs": {"observations": torch.as_tensor(obs["observation"][None]),
                         "action_mask": torch.as_tensor(obs["action_mask"][None].astype(
                             np.float32))}}
        logits = agent.modules["main"].forward_inference(batch)["action_dist_inputs"][0]
        assert a == int(torch.argmax(logits))
        state.apply(a)


def test_selfplay_snapshots_are_frozen_copies_of_main(local_ray, tmp_path: Path) -> None:
    from ray.rllib.core.rl_module.rl_module import RLModule

    from allfives_train.rllib.algo import build_config, register
    from allfives_train.rllib.run import train

    cfg = load_config(TABLE_CONFIG, {
        "players": 4, "teams": True, "rllib_policy": "selfplay", "rllib_snapshot_every": 1,
        "rllib_snapshot_keep": 2, "iterations": 2, "num_env_runners": 0, "train_batch_size": 256,
        "reward": "win", "opponents": [], "rllib_bc_teacher": None,
        "minibatch_size": 128, "num_epochs": 1, "net_arch": [32], "rules": {"target": 60},
        "run_dir": str(tmp_path / "selfplay")})
    final = train(cfg, quiet=True)
    modules = final / "learner_group" / "learner" / "rl_module"
    assert sorted(p.name for p in modules.iterdir() if p.is_dir()) == ["main", "snap_1",
                                                                      "snap_2"]
    main = RLModule.from_checkpoint(str(modules / "main")).get_state()
    snap = RLModule.from_checkpoint(str(modules / "snap_2")).get_state()
    older = RLModule.from_checkpoint(str(modules / "snap_1")).get_state()
    assert main.keys() == snap.keys()
    assert all(np.array_equal(np.asarray(main[k]), np.asarray(snap[k])) for k in main)
    assert not all(np.array_equal(np.asarray(main[k]), np.asarray(older[k])) for k in main)

    # the env runners play with the same policy weights (a remote runner, as on a cluster)
    register()
    algo = build_config(cfg.replace(num_env_runners=1)).build_algo()
    try:
        algo.train()
        learner = algo.learner_group.get_weights(module_ids=["main"])["main"]
        runner = algo.env_runner_group.foreach_env_runner(
            lambda er: er.module["snap_1"].get_state(), local_env_runner=False)[0]
        actor = [k for k in learner if k.startswith(("pi.", "encoder.actor_encoder."))]
        assert len(actor) >= 4 and set(actor) <= set(runner)
        assert all(np.array_equal(np.asarray(runner[k]), np.asarray(learner[k])) for k in actor)
    finally:
        algo.stop()


def test_warm_start_imitates_the_teacher_and_reaches_the_env_runners(local_ray) -> None:
    """bc_teacher: the learner's module fits the teacher's moves better than a uniform
    choice among the legal ones, and the remote env runner plays with the fitted weights."""
    from allfives_train.rllib.algo import build_config, register
    from allfives_train.rllib.warmstart import collect_teacher, warm_start

    cfg = load_config(TABLE_CONFIG, {
        "num_env_runners": 1, "train_batch_size": 256, "minibatch_size": 128,
        "num_epochs": 1, "net_arch": [32], "rllib_bc_samples": 2000, "rllib_bc_epochs": 5,
        "rllib_bc_workers": 1, "rules": {"target": 60}, "opponents": [{"agent": "greedy"}]})
    data = collect_teacher(cfg)
    uniform = float(np.mean(1.0 / data["masks"].sum(axis=1)))
    register()
    algo = build_config(cfg).build_algo()
    try:
        stats = warm_start(algo, cfg, ["main"])
        assert stats["samples"] == len(data["actions"])
        assert stats["accuracy"] > uniform + 0.1
        learner = algo.learner_group.get_weights(module_ids=["main"])["main"]
        runner = algo.env_runner_group.foreach_env_runner(
            lambda er: er.module["main"].get_state(), local_env_runner=False)[0]
        actor = [k for k in learner if k.startswith(("pi.", "encoder.actor_encoder."))]
        assert len(actor) >= 4
        assert all(np.array_equal(np.asarray(runner[k]), np.asarray(learner[k])) for k in actor)
    finally:
        algo.stop()


def test_a_resumed_run_restores_the_pool_and_reaches_the_env_runners(local_ray,
                                                                     tmp_path: Path) -> None:
    """``--resume`` (issue 33): the snapshot pool the checkpoint's card names is rebuilt, and
    the remote env runner plays with the checkpoint's weights of every module, not with the
    fresh ones the algorithm was built with."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    from allfives_train.rllib.algo import build_config, register
    from allfives_train.rllib.run import Session, Stopper, newest_checkpoint, train

    cfg = load_config(TABLE_CONFIG, {
        "num_env_runners": 1, "train_batch_size": 256, "minibatch_size": 128,
        "num_epochs": 1, "net_arch": [32], "rllib_bc_teacher": None, "rules": {"target": 60},
        "iterations": 2, "rllib_checkpoint_every": 1, "rllib_snapshot_every": 1,
        "rllib_snapshot_keep": 2,
        "run_dir": str(tmp_path / "run")})
    train(cfg, quiet=True)
    path, card = newest_checkpoint(tmp_path / "run", quiet=True)
    assert path.name == "checkpoint_000002" and card["snapshots"] == ["snap_1", "snap_2"]
    register()
    algo = build_config(cfg).build_algo()
    try:
        session = Session(cfg, tmp_path / "run", True, Stopper())
        session.algo = algo
        session.restore(path, card)
        assert session.iteration == 2 and algo.iteration == 2
        modules = path / "learner_group" / "learner" / "rl_module"
        for module in ("main", "snap_1", "snap_2"):
            saved = RLModule.from_checkpoint(str(modules / module)).get_state()
            runner = algo.env_runner_group.foreach_env_runner(
                lambda er, m=module: er.module[m].get_state(), local_env_runner=False)[0]
            actor = [k for k in saved if k.startswith(("pi.", "encoder.actor_encoder."))]
            assert len(actor) >= 4 and set(actor) <= set(runner)
            assert all(np.array_equal(np.asarray(runner[k]), np.asarray(saved[k]))
                       for k in actor), module
        assert "snap_0" not in algo.env_runner_group.foreach_env_runner(
            lambda er: list(er.module.keys()), local_env_runner=False)[0]
    finally:
        algo.stop()
