"""Training runs survive faults and bad input (issue 9 items 1-8): a dead run directory, a
truncated snapshot or checkpoint, a second run into a running one, rules under which a game
can end before the learner moves, Ctrl-C, inputs that are wrong only at the end, a missing
extra, and what the user sees (progress, times, the card's evaluation step)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import allfives_train.algorithms.maskable_ppo.trainer as ppo_module  # noqa: E402
import allfives_train.shell.hooks as hooks_module  # noqa: E402
from allfives.cli import main  # noqa: E402
from allfives_env.game.observation import OBS_SIZE  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.tiles import N_ACTIONS  # noqa: E402
from allfives_train.config import MASKABLE_CONFIG  # noqa: E402
from allfives_train.games.single_agent import AllFivesSingleAgentEnv  # noqa: E402
from allfives_train.shell.rundir import RunLock  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "checkpoints"

TINY = ["--config", str(MASKABLE_CONFIG), "--n-envs", "2", "--n-steps", "64",
        "--batch-size", "64", "--n-epochs", "1",
        "--net-arch", "16", "16", "--eval-games", "4", "--eval-every", "128",
        "--checkpoint-every", "128", "--snapshot-every", "128", "--quiet",
        "--eval-opponents", "random", "greedy", "--bc-teacher", "null"]


def train(run_dir: Path, *extra: str) -> int:
    return main(["train", "--run-dir", str(run_dir), *TINY, *extra])


def card(path: Path) -> dict:
    return json.loads((path / "card.json").read_text())


def eval_steps(run_dir: Path) -> list[int]:
    return [json.loads(line)["steps"] for line in (run_dir / "eval.jsonl").read_text()
            .splitlines()]


def one_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture(scope="module")
def done_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 2-seat run of 256 steps (checkpoints and snapshots at 128 and 256)."""
    run = tmp_path_factory.mktemp("done") / "run"
    assert train(run, "--total-steps", "256") == 0
    return run


# ---------------------------------------------------------------- 1. a dead run directory
def listed(run: Path, *names: str) -> None:
    """The run's manifest.json, listing ``names`` (allfives_train.shell.manifest) and, as
    temporaries, the leftovers of interrupted writes (each listed before it was made)."""
    files: dict[str, dict[str, object]] = {
        n: {"size": (run / n).stat().st_size} for n in names}
    for p in run.rglob("*"):
        if ".tmp-" in p.name or ".old-" in p.name:
            files[p.relative_to(run).as_posix()] = {"temporary": True}
    (run / "manifest.json").write_text(json.dumps({"format": "allfives-run-manifest/1",
                                                   "files": files}))


def test_a_run_killed_before_its_first_checkpoint_starts_over(tmp_path: Path, capsys) -> None:
    dead = tmp_path / "dead"  # what a kill -9 after the first evaluation leaves
    (dead / "checkpoints" / ".step_000000000128.tmp-4242").mkdir(parents=True)
    (dead / "snapshots").mkdir()
    (dead / "snapshots" / ".snap_000000000128.npz.tmp-4242").write_bytes(b"half")
    (dead / "config.yaml").write_text("total_steps: 128\n")
    (dead / "eval.jsonl").write_text(json.dumps({"steps": 0, "results": {}}) + "\n")
    (dead / ".lock").write_text(json.dumps({"pid": 2**22 + 7, "host": "gone"}))  # stale
    listed(dead, "config.yaml", "eval.jsonl")  # what it recorded having written
    assert train(dead, "--total-steps", "128") == 0  # a fresh start takes it over
    err = capsys.readouterr().err
    assert "saved no checkpoint" in err and "starting it over" in err
    assert eval_steps(dead) == [0, 128]
    assert not list(dead.rglob("*.tmp-*")) and not (dead / ".lock").exists()

    again = tmp_path / "again"  # --resume in such a directory starts over too
    (again / "checkpoints").mkdir(parents=True)
    (again / "config.yaml").write_text("total_steps: 128\n")
    (again / "eval.jsonl").write_text(json.dumps({"steps": 0, "results": {}}) + "\n")
    listed(again, "config.yaml", "eval.jsonl")
    assert train(again, "--total-steps", "128", "--resume") == 0
    assert card(again / "final")["steps"] == 128 and eval_steps(again) == [0, 128]


# ---------------------------------------------------------------- 2. unreadable files
def test_resume_sets_aside_a_truncated_snapshot_and_an_unreadable_latest(
        done_run: Path, tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(done_run, run)
    snap = run / "snapshots" / "snap_000000000256.npz"
    snap.write_bytes(snap.read_bytes()[: snap.stat().st_size // 2])  # BadZipFile before
    model = run / "checkpoints" / "step_000000000256" / "model.zip"
    model.write_bytes(model.read_bytes()[:1000])
    (run / "latest.txt").unlink()  # and the marker is gone: the checkpoints are searched
    capsys.readouterr()
    assert train(run, "--total-steps", "384", "--resume") == 0
    err = capsys.readouterr().err
    assert "snap_000000000256.npz is unreadable" in err
    assert "step_000000000256 is unreadable" in err and "trying the one before it" in err
    assert (run / "snapshots" / "unreadable_snap_000000000256.npz").is_file()
    assert (run / "checkpoints" / "unreadable_step_000000000256").is_dir()
    final = card(run / "final")
    assert final["steps"] == 384  # resumed from step 128, the newest readable one
    assert [h["steps"] for h in final["eval_history"]] == [0, 128, 256, 384]
    assert eval_steps(run) == [0, 128, 256, 384]  # no step twice after the resume


def test_a_checkpoint_swap_cut_short_is_put_back(done_run: Path, tmp_path: Path) -> None:
    from allfives_train.shell.rundir import clean_leftovers

    run = tmp_path / "run"
    shutil.copytree(done_run, run)
    os.replace(run / "best", run / ".best.old-77")  # killed between the two renames
    shutil.copytree(run / "final", run / ".best.tmp-77")
    data = json.loads((run / "manifest.json").read_text())  # both listed before they were made
    data["files"].update({".best.old-77": {"temporary": True}, ".best.tmp-77": {"temporary": True}})
    (run / "manifest.json").write_text(json.dumps(data))
    done = clean_leftovers(run)
    assert (run / "best" / "card.json").is_file() and "restored best" in done
    assert not list(run.glob(".*"))


# ---------------------------------------------------------------- 3. the lock
def test_a_second_run_into_a_running_run_dir_is_refused(done_run: Path, tmp_path: Path,
                                                        capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(done_run, run)
    before = {str(p.relative_to(run)) for p in run.rglob("*")}
    with RunLock(run):
        for extra in ([], ["--resume"]):
            assert train(run, "--total-steps", "384", *extra) == 2
            line = one_line(capsys.readouterr().err)
            assert "is in use by a running training" in line
            assert f"pid {os.getpid()} on host {socket.gethostname()}, started 20" in line
    assert {str(p.relative_to(run)) for p in run.rglob("*")} == before  # nothing changed


# ---------------------------------------------------------------- 4. valid rules
@pytest.mark.parametrize("option", [{"target": 10}, {"hand_size": 1}])
def test_reset_always_gives_the_learner_a_move(option: dict) -> None:
    env = AllFivesSingleAgentEnv(make_rules("all_fives", players=2, **option),
                                 [{"agent": "heuristic", "weight": 1.0}], seed=0)
    for k in range(200):
        env.reset(seed=k if k % 2 else None)
        assert not env.state.game_over and env.action_masks().any()


@pytest.mark.parametrize("option", [{"target": 10}, {"hand_size": 1}])
def test_the_warm_start_collects_under_such_rules(option: dict) -> None:
    from allfives_train.algorithms.maskable_ppo.imitation import collect
    from allfives_train.config import load_config

    # (an IndexError in heuristic.py before)
    data = collect(load_config(None, {"bc_teacher": "heuristic"}),
                   make_rules("all_fives", players=2, **option), 300, 0)
    assert len(data["actions"]) >= 300 and data["masks"][np.arange(len(data["actions"])),
                                                         data["actions"]].all()


def test_training_with_a_tiny_target_and_warm_start(tmp_path: Path) -> None:
    assert train(tmp_path / "t", "--total-steps", "128", "--set", "target=10",
                 "--bc-teacher", "heuristic", "--bc-samples", "100", "--bc-epochs", "1",
                 "--bc-workers", "1") == 0


# ---------------------------------------------------------------- 5. Ctrl-C
def test_ctrl_c_saves_a_checkpoint_and_says_how_to_resume(tmp_path: Path, capsys,
                                                          monkeypatch) -> None:
    calls = []

    def ctrl_c_at_second_eval(name: str) -> None:
        calls.append(name)
        if len(calls) == 2:  # the evaluation at step 128 is written, its checkpoint not
            raise KeyboardInterrupt

    monkeypatch.setattr(hooks_module, "fault_point", ctrl_c_at_second_eval)
    run = tmp_path / "run"
    assert train(run, "--total-steps", "256") == 130
    line = one_line(capsys.readouterr().err)
    saved = run / "checkpoints" / "step_000000000128"
    assert f"interrupted at 128 steps; checkpoint saved to {saved}" in line
    assert line.endswith(f"Continue with: allfives train --run-dir {run} --resume")
    assert card(saved)["steps"] == 128
    monkeypatch.undo()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # a terminal: the bar shows
    assert main(["train", "--run-dir", str(run), "--resume"]) == 0  # the exact command
    assert card(run / "final")["steps"] == 256 and eval_steps(run) == [0, 128, 256]
    err = capsys.readouterr().err  # the bar of the resumed run: from 128 to 256, in full
    assert re.search(r"PPO:  50%\|.*\| 128/256", err) and re.search(r"PPO: 100%.*256/256", err)


# ---------------------------------------------------------------- 6. checks before the work
def _no_work(*_: object, **__: object) -> None:
    raise AssertionError("work started before the inputs were checked")


def test_bad_inputs_are_refused_before_any_work(done_run: Path, tmp_path: Path, capsys,
                                                monkeypatch) -> None:
    monkeypatch.setattr(ppo_module, "make_vec_env", _no_work)
    run = tmp_path / "never"
    ckpt = f"ckpt:{done_run / 'final'}"  # a 2-seat checkpoint, with model.zip
    assert train(run, "--players", "4", "--opponents", f"{ckpt}@1") == 2
    assert "opponents" in (msg := one_line(capsys.readouterr().err))
    assert "trained for 2 seats; this game has 4 seats" in msg
    assert train(run, "--players", "4", "--init-from", str(done_run / "final")) == 2
    assert "init_from" in (msg := one_line(capsys.readouterr().err))
    assert "trained for 2 seats; this game has 4 seats" in msg
    assert train(run, "--eval-opponents", "random", "nobody", "--best-metric", "random") == 2
    assert "eval_opponents 'nobody'" in one_line(capsys.readouterr().err)

    n = 50
    good = tmp_path / "bc.npz"
    np.savez_compressed(good, obs=np.zeros((n, OBS_SIZE), np.float32),
                        masks=np.ones((n, N_ACTIONS), bool), actions=np.zeros(n, np.int64),
                        returns=np.zeros(n, np.float32))
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size * 2 // 3])
    assert train(run, "--bc-data", str(cut)) == 2
    assert "not readable warm-start data" in one_line(capsys.readouterr().err)
    assert not run.exists()  # nothing created


def test_the_fast_path_refuses_bad_opponents_before_any_work(tmp_path: Path, capsys) -> None:
    pytest.importorskip("numba")
    run = tmp_path / "never"
    fast = ("--algo", "dmc", "--policy", "action_features", "--engine", "batched",
            "--init-from", str(FIXTURES / "dmc4_all_fives_2p"), "--features", "13",
            "--move-head", "64")
    net = FIXTURES / "dmc4_all_fives_2p"
    assert train(run, *fast, "--opponents", f"search:net={net},infer=0.5@1") == 2
    msg = one_line(capsys.readouterr().err)
    assert "config opponents: agent 'search:net=" in msg and "no batched version" in msg
    assert train(run, *fast, "--opponents", "heuristic:foo=1@1") == 2
    assert "config opponents 'heuristic:foo=1'" in one_line(capsys.readouterr().err)
    assert not run.exists()  # nothing created


# ---------------------------------------------------------------- 7. the train extra
def test_missing_train_extra_gives_an_install_hint(tmp_path: Path, capsys,
                                                   monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)  # import fails
    assert train(tmp_path / "r") == 2
    line = one_line(capsys.readouterr().err)
    assert "stable_baselines3 is not installed: pip install" in line and "[train]" in line


# ---------------------------------------------------------------- 8. what the user sees
def test_progress_bars_times_and_the_cards_evaluation_step(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    args = [a for a in TINY if a != "--quiet"]
    t0 = time.perf_counter()
    code = main(["train", "--run-dir", str(run), *args, "--total-steps", "200",
                 "--eval-every", "1000", "--bc-teacher", "greedy", "--bc-samples", "100",
                 "--bc-epochs", "2", "--bc-workers", "1", "--progress"])
    real = time.perf_counter() - t0
    out, err = capsys.readouterr()
    assert code == 0
    assert "warm start: collecting" in err and "warm start: imitating" in err
    assert "2/2" in err  # the epochs bar
    assert re.search(r"PPO: 100%\|.*\| 256/256", err)  # 200 rounded up to whole rollouts
    final = card(run / "final")
    match = re.search(r"this session (\d+) s \(PPO with its evaluations (\d+) s\), the run "
                      r"in all (\d+) s", out)
    assert match, out
    session, ppo, in_all = map(int, match.groups())
    assert in_all == round(final["wall_time_s"]) == session  # one session: the same time
    assert ppo <= in_all and final["wall_time_s"] <= real + 0.5
    assert final["wall_time_s"] >= final["warm_start"]["seconds"]
    md = (run / "final" / "card.md").read_text()
    assert "## Evaluation at 256 learner steps" in md  # the final evaluation's step
    step0 = (run / "best" / "card.md").read_text()
    assert "## Evaluation at 0 learner steps" in step0
