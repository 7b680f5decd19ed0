"""A run folder is confined (issue 61): the real ``allfives train`` (fresh, ``--resume``,
checkpoint pruning, leftover cleaning) on a hostile run folder (manifest keys with ``..``, an
absolute path, a key under a symlinked subfolder, symlinked leftovers) deletes, renames and
changes nothing outside it (hashed byte for byte before and after) and refuses a manifest that
points outside in one line, exit 2; a finished run is said finished and nothing is rewritten."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
FAST_2P = ROOT / "configs" / "train" / "fast_2p.yaml"
#: fast_2p with a tiny network and few games, so 2,048 steps take seconds
SMALL = ["--engine", "scalar", "--device", "cpu", "--n-envs", "4", "--n-steps", "16",
         "--batch-size", "32", "--n-epochs", "1", "--net-arch", "16", "16", "--eval-games", "4",
         "--eval-every", "1024", "--checkpoint-every", "1024", "--snapshot-every", "1024",
         "--eval-opponents", "random", "--best-metric", "random", "--quiet"]
FORMAT = "allfives-run-manifest/1"


def allfives_train(run_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """The real command, in a child process."""
    cmd = [sys.executable, "-m", "allfives.cli", "train", "--config", str(FAST_2P),
           "--total-steps", "2048", "--run-dir", str(run_dir), *SMALL, *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` (links not followed): a file's sha256, a link's target,
    a folder's name, so that any deletion, rename or change shows."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(folder).as_posix()
            if p.is_symlink():
                out[rel] = "link -> " + os.readlink(p)
            elif p.is_dir():
                out[rel] = "folder"
            else:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def one_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def write_manifest(run: Path, files: dict[str, dict[str, object]]) -> None:
    (run / "manifest.json").write_text(json.dumps({"format": FORMAT, "files": files}))


@pytest.fixture()
def victims(tmp_path: Path) -> Path:
    """A user's files beside the run folders: what no run may touch."""
    home = tmp_path / "home"
    (home / "userdir" / ".thesis.tmp-final").mkdir(parents=True)
    (home / "victim.txt").write_text("mine\n")
    (home / "x").write_text("also mine\n")
    (home / "userdir" / "notes.txt").write_text("notes\n")
    (home / "userdir" / ".thesis.tmp-final" / "chapter1.tex").write_text("chapter\n")
    (home / "userdir" / ".report.old-2").write_text("old report\n")
    return home


def hostile(home: Path, case: str) -> Path:
    """A run folder ``home/runs/r1`` whose manifest reaches ``home``'s files."""
    run = home / "runs" / "r1"
    (run / "snapshots").mkdir(parents=True)
    (run / "tb").mkdir()
    if case == "dotdot":
        write_manifest(run, {"snapshots/../../../victim.txt": {"size": 5},
                             "tb/../../../x": {"size": 10}})
    elif case == "absolute":
        write_manifest(run, {str(home / "victim.txt"): {"size": 5}})
    elif case == "symlinked subfolder":
        (run / "snapshots" / "ln").symlink_to(home / "userdir", target_is_directory=True)
        write_manifest(run, {"snapshots/ln/notes.txt": {"size": 6},
                             "snapshots/ln/.thesis.tmp-final": {"temporary": True}})
    elif case == "symlinked leftover":
        (run / ".config.yaml.tmp-77").symlink_to(home / "victim.txt")
        (run / "snapshots" / ".snap_1.npz.old-77").symlink_to(home / "userdir")
        write_manifest(run, {".config.yaml.tmp-77": {"temporary": True},
                             "snapshots/.snap_1.npz.old-77": {"temporary": True}})
    return run


CASES = ["dotdot", "absolute", "symlinked subfolder", "symlinked leftover"]


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
@pytest.mark.parametrize("case", CASES)
def test_a_manifest_that_points_outside_is_refused_and_nothing_is_touched(
        victims: Path, case: str, resume: bool) -> None:
    run = hostile(victims, case)
    before = snapshot(victims)
    got = allfives_train(run, *(["--resume"] if resume else []))
    line = one_line(got.stderr)
    assert got.returncode == 2, got.stderr
    assert "manifest.json lists" in line and "nothing was changed" in line, line
    assert snapshot(victims) == before  # the run folder too: it lies under home


def test_leftover_cleaning_through_a_symlinked_subfolder_is_refused(victims: Path) -> None:
    """An empty manifest and ``snapshots -> userdir``: the user's ``.thesis.tmp-final/`` and
    ``.report.old-2`` look like leftovers, and a run would write its snapshots there."""
    run = victims / "runs" / "r1"
    run.mkdir(parents=True)
    write_manifest(run, {})
    (run / "snapshots").symlink_to(victims / "userdir", target_is_directory=True)
    before = snapshot(victims)
    for extra in ([], ["--resume"]):
        got = allfives_train(run, *extra)
        line = one_line(got.stderr)
        assert got.returncode == 2 and "snapshots is a symlink" in line, got.stderr
        assert snapshot(victims) == before


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished fast_2p run of 2,048 steps (checkpoints at 1,024 and 2,048)."""
    run = tmp_path_factory.mktemp("real") / "r1"
    got = allfives_train(run)
    assert got.returncode == 0, got.stderr[-3000:]
    return run


def copy_of(run: Path, home: Path) -> Path:
    copy = home / "runs" / "r1"
    copy.parent.mkdir(parents=True)
    shutil.copytree(run, copy, symlinks=True)
    return copy


def test_checkpoint_pruning_on_resume_refuses_a_key_that_climbs_out(real_run: Path,
                                                                     victims: Path) -> None:
    run = copy_of(real_run, victims)
    data = json.loads((run / "manifest.json").read_text())
    step = sorted(k.split("/")[1] for k in data["files"] if k.startswith("checkpoints/"))[0]
    data["files"][f"checkpoints/{step}/../../../../victim.txt"] = {"size": 5}
    (run / "manifest.json").write_text(json.dumps(data))
    before = snapshot(victims)
    got = allfives_train(run, "--resume", "--total-steps", "4096")
    line = one_line(got.stderr)
    assert got.returncode == 2 and "goes up out of the run folder" in line, got.stderr
    assert snapshot(victims) == before


def test_a_users_lookalike_leftovers_in_a_real_run_are_kept(real_run: Path,
                                                            victims: Path) -> None:
    """Files named like the temporaries of interrupted writes but not listed in the manifest
    are the user's: a resume that trains on keeps them, byte for byte."""
    run = copy_of(real_run, victims)
    (run / "snapshots" / ".thesis.tmp-final").mkdir()
    (run / "snapshots" / ".thesis.tmp-final" / "a.txt").write_text("a\n")
    (run / ".report.old-2").write_text("r\n")
    (run / "checkpoints" / ".step_000000009999.tmp-1").write_text("t\n")
    mine = {p: snapshot(victims)[p] for p in ("runs/r1/snapshots/.thesis.tmp-final/a.txt",
                                             "runs/r1/.report.old-2",
                                             "runs/r1/checkpoints/.step_000000009999.tmp-1")}
    got = allfives_train(run, "--resume", "--total-steps", "3072")
    assert got.returncode == 0, got.stderr[-3000:]
    after = snapshot(victims)
    assert all(after.get(p) == h for p, h in mine.items())
    assert json.loads((run / "final" / "card.json").read_text())["steps"] == 3072


def test_a_finished_run_is_said_finished_and_nothing_is_rewritten(real_run: Path,
                                                                  victims: Path) -> None:
    run = copy_of(real_run, victims)
    before = snapshot(run)
    stamps = {p: p.stat().st_mtime_ns for p in run.rglob("*")}
    got = allfives_train(run, "--resume")
    assert got.returncode == 0, got.stderr
    line = one_line(got.stderr)
    assert "holds a finished run (2,048 steps" in line and "--total-steps N" in line, line
    assert snapshot(run) == before and {p: p.stat().st_mtime_ns for p in run.rglob("*")} == \
        stamps
    got = allfives_train(run)  # a fresh run into it: the same words, refused
    line = one_line(got.stderr)
    assert got.returncode == 2 and "holds a finished run" in line, got.stderr
    assert snapshot(run) == before
