"""No training run loses data (issues 49 and 50): a run touches only the files its
``manifest.json`` lists, a fresh run refuses a folder it did not write, ``--resume`` never
deletes a run whose checkpoints are damaged, a changed ``model.zip``/``trainer.pt`` is not
loaded, old snapshots are pruned, and the refusals are one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from allfives.cli import main  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, MASKABLE_CONFIG  # noqa: E402

SB3 = ["--config", str(MASKABLE_CONFIG), "--n-envs", "2", "--n-steps", "64",
       "--batch-size", "64", "--n-epochs", "1", "--net-arch", "16", "16", "--eval-games", "4",
       "--eval-every", "128", "--checkpoint-every", "128", "--snapshot-every", "128",
       "--quiet", "--eval-opponents", "random", "greedy", "--bc-teacher", "null"]
FAST = ["--config", str(DEFAULT_CONFIG.parent / "fast_2p.yaml"), "--engine", "scalar",
        "--device", "cpu", "--n-envs", "4", "--n-steps", "16", "--batch-size", "32",
        "--n-epochs", "1", "--net-arch", "16", "16", "--eval-games", "4", "--eval-every", "64",
        "--checkpoint-every", "64", "--snapshot-every", "64", "--eval-opponents", "random",
        "greedy", "--best-metric", "greedy", "--quiet"]


def train(run_dir: Path, *extra: str, flags: list[str] = SB3) -> int:
    return main(["train", "--run-dir", str(run_dir), *flags, *extra])


def one_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (the lock file and manifest aside)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and p.name not in (".lock", "manifest.json")}


def listed(run: Path) -> set[str]:
    return set(json.loads((run / "manifest.json").read_text())["files"])


@pytest.fixture(scope="module")
def sb3_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished MaskablePPO run of 256 steps (checkpoints and snapshots at 128 and 256)."""
    run = tmp_path_factory.mktemp("sb3") / "run"
    assert train(run, "--total-steps", "256") == 0
    return run


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished fast-path run of 128 steps (checkpoints at 64 and 128)."""
    run = tmp_path_factory.mktemp("fast") / "run"
    assert train(run, "--total-steps", "128", flags=FAST) == 0
    return run


# ---------------------------------------------------------------- the manifest
def test_the_manifest_lists_every_file_the_run_wrote(sb3_run: Path) -> None:
    files = listed(sb3_run)
    assert set(tree(sb3_run)) == files
    data = json.loads((sb3_run / "manifest.json").read_text())["files"]
    assert len(data["final/model.zip"]["sha256"]) == 64
    assert "sha256" not in data["final/policy.npz"]  # data, not code: its size only


# ---------------------------------------------------------------- (a) a folder it did not write
def test_a_fresh_run_refuses_a_users_folder_and_every_byte_survives(tmp_path: Path,
                                                                     capsys) -> None:
    mine = tmp_path / "mine"
    for name in ("snapshots", "best", "final", "tb"):
        (mine / name).mkdir(parents=True)
        (mine / name / "notes.txt").write_text(f"my {name}\n")
    (mine / "snapshots" / "snap_000000000128.npz").write_bytes(b"my own array")
    (mine / "config.yaml").write_text("mine: true\n")
    (mine / "eval.jsonl").write_text('{"mine": 1}\n')
    before = tree(mine)
    capsys.readouterr()
    assert train(mine, "--total-steps", "128") == 2
    line = one_line(capsys.readouterr().err)
    assert "is not a run of this program (no manifest.json): nothing was changed" in line
    assert "another --run-dir" in line and "--resume" in line
    assert tree(mine) == before and not (mine / "manifest.json").exists()
    assert train(mine, "--total-steps", "128", flags=FAST) == 2  # the fast path too
    assert "is not a run of this program" in one_line(capsys.readouterr().err)
    assert tree(mine) == before


def test_starting_over_removes_only_what_the_manifest_lists(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"  # a run stopped before its first checkpoint, plus a user's file
    run.mkdir()
    (run / "config.yaml").write_text("total_steps: 128\n")
    (run / "eval.jsonl").write_text("{}\n")
    (run / "snapshots").mkdir()
    (run / "snapshots" / "mine.npz").write_bytes(b"keep me")
    (run / "manifest.json").write_text(json.dumps({
        "format": "allfives-run-manifest/1",
        "files": {"config.yaml": {"size": 17}, "eval.jsonl": {"size": 3}}}))
    assert train(run, "--total-steps", "128") == 0
    assert "starting it over" in capsys.readouterr().err
    assert (run / "snapshots" / "mine.npz").read_bytes() == b"keep me"
    assert "snapshots/mine.npz" not in listed(run)


# ---------------------------------------------------------------- (b) --resume over damage
def test_resume_three_times_with_every_checkpoint_damaged_deletes_nothing(
        fast_run: Path, tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(fast_run, run)
    for pt in (run / "checkpoints").glob("step_*/trainer.pt"):
        pt.write_bytes(pt.read_bytes()[:200])  # truncated
    before = tree(run)
    kept = {k: v for k, v in before.items() if not k.startswith("checkpoints/")}
    damaged = sorted(v for k, v in before.items() if k.startswith("checkpoints/"))
    assert len(damaged) >= 10 and any(k.startswith("snapshots/") for k in kept)
    capsys.readouterr()
    for attempt in range(3):
        assert train(run, "--total-steps", "192", "--resume", flags=FAST) == 2
        err = capsys.readouterr().err
        last = err.strip().splitlines()[-1]
        assert "nothing was deleted" in last and "another --run-dir" in last, (attempt, err)
        assert "saved no checkpoint" not in err and "starting it over" not in err
        now = tree(run)
        assert {k: v for k, v in now.items() if not k.startswith("checkpoints/")} == kept
        assert sorted(v for k, v in now.items() if k.startswith("checkpoints/")) == damaged
        assert not list((run / "checkpoints").glob("step_*"))
        assert len(list((run / "checkpoints").glob("unreadable_step_*"))) == 2


# ---------------------------------------------------------------- (c) a changed file
@pytest.mark.parametrize("source, name, older, newer, total", [
    ("sb3_run", "model.zip", "step_000000000128", "step_000000000256", "384"),
    ("fast_run", "trainer.pt", "step_000000000064", "step_000000000128", "192")])
def test_a_changed_code_carrying_file_is_refused_on_resume(
        source: str, name: str, older: str, newer: str, total: str, tmp_path: Path,
        capsys, request: pytest.FixtureRequest) -> None:
    """An older checkpoint's model.zip / trainer.pt copied over the newest: refused in one
    line (its sha256 is not the one the run recorded), nothing changed, nothing set aside."""
    run = tmp_path / "run"
    shutil.copytree(request.getfixturevalue(source), run)
    step = run / "checkpoints" / newer
    shutil.copy(run / "checkpoints" / older / name, step / name)
    before = tree(run)
    capsys.readouterr()
    flags = FAST if source == "fast_run" else SB3
    assert train(run, "--total-steps", total, "--resume", flags=flags) == 2
    line = one_line(capsys.readouterr().err)
    assert f"refusing to load {step / name}" in line
    assert "its sha256 differs from the one manifest.json recorded" in line
    assert tree(run) == before and step.is_dir()


def test_an_old_run_without_a_manifest_resumes_only_when_trusted(fast_run: Path,
                                                                 tmp_path: Path,
                                                                 capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(fast_run, run)
    (run / "manifest.json").unlink()
    before = tree(run)
    capsys.readouterr()
    assert train(run, "--total-steps", "192", "--resume", flags=FAST) == 2
    line = one_line(capsys.readouterr().err)
    assert "has no manifest.json" in line and "--trust-checkpoint" in line
    assert tree(run) == before
    assert train(run, "--total-steps", "192", "--resume", "--trust-checkpoint",
                 flags=FAST) == 0
    assert "checkpoints/step_000000000192/trainer.pt" in listed(run)
    assert "checkpoints/step_000000000064/trainer.pt" in listed(run)  # recorded, then kept


# ---------------------------------------------------------------- (d) retention
def test_retention_keeps_the_newest_snapshots_and_never_a_users_file(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    assert train(run, "--total-steps", "64", flags=FAST) == 0
    mine = run / "snapshots" / "snap_000000000000.npz"  # a user's copy: not listed
    shutil.copy(run / "snapshots" / "snap_000000000064.npz", mine)
    assert train(run, "--total-steps", "384", "--resume", "--keep-snapshots", "2",
                 "--snapshot-keep", "1", flags=FAST) == 0
    names = sorted(p.name for p in (run / "snapshots").iterdir())
    assert names == ["snap_000000000000.npz", "snap_000000000320.npz",
                     "snap_000000000384.npz"]
    assert train(run, "--total-steps", "512", "--resume", "--keep-snapshots", "1",
                 "--snapshot-keep", "3", flags=FAST) == 0  # the pool's three stay
    names = sorted(p.name for p in (run / "snapshots").iterdir())
    assert names == [mine.name, *(f"snap_000000000{s}.npz" for s in (384, 448, 512))]


def test_a_negative_retention_is_refused(tmp_path: Path, capsys) -> None:
    assert train(tmp_path / "r", "--keep-snapshots", "-1", flags=FAST) == 2
    assert "keep_snapshots: -1 is not allowed" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- (e) one-line refusals
def test_a_second_run_into_a_run_and_a_file_as_run_dir_are_one_line(sb3_run: Path,
                                                                    tmp_path: Path,
                                                                    capsys) -> None:
    before = tree(sb3_run)
    capsys.readouterr()
    assert train(sb3_run, "--total-steps", "384") == 2
    line = one_line(capsys.readouterr().err)
    assert line.endswith(f"run_dir {sb3_run} already holds a run: continue it with --resume, "
                         "or give another --run-dir")
    assert tree(sb3_run) == before
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for flags in (SB3, FAST):
        assert train(a_file, flags=flags) == 2
        line = one_line(capsys.readouterr().err)
        assert f"{a_file} is a file, not a folder: give another --run-dir" in line
        assert "Errno" not in line
    assert a_file.read_text() == "x"


# ---------------------------------------------------------------- (f) what the user is told
def test_the_first_line_says_the_steps_rounded_to_whole_rollouts(tmp_path: Path,
                                                                capsys) -> None:
    from allfives_train.cli import start_line
    from allfives_train.config import load_config

    line = start_line(load_config(DEFAULT_CONFIG.parent / "selfplay_2p.yaml"), False)
    assert line.startswith("allfives train: all_fives 2 seats, algo ppo_batched, run dir ")
    assert line.endswith("606,208 steps (total_steps 600,000 rounded up to whole rollouts of "
                         "8,192 steps: n_envs 256 x n_steps 32)")
    run = tmp_path / "run"
    loud = [a for a in FAST if a != "--quiet"]
    assert train(run, "--total-steps", "100", flags=loud) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == (
        f"allfives train: all_fives 2 seats, algo ppo_batched, run dir {run}, 128 steps "
        "(total_steps 100 rounded up to whole rollouts of 64 steps: n_envs 4 x n_steps 16)")
    assert json.loads((run / "final" / "card.json").read_text())["steps"] == 128
    assert "PPO_BATCHED" not in err  # no bar: stderr is no terminal here
    assert train(run, "--total-steps", "64", flags=FAST) == 2  # --quiet: the refusal alone
    assert capsys.readouterr().out == ""
