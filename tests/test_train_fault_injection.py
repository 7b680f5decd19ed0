"""Fault injection (issue 9, "done when"): a small training run is killed with SIGKILL at
chosen moments (during the warm start, between an evaluation and its checkpoint, during a
snapshot write, during a checkpoint write and while ``best/`` is being replaced) and
interrupted with Ctrl-C; ``--resume`` then always finishes the run, and no checkpoint that
was on disk is lost or rewritten.

Each moment is hit deterministically through ``ALLFIVES_FAULT`` (:mod:`train.faults`): the
training subprocess stops itself there. The killed runs go side by side; the resumes run in
this process (torch already imported) to keep the test short.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from subprocs import sigint_as_in_a_terminal  # noqa: E402

from allfives_env.cli import main  # noqa: E402
from train.config import MASKABLE_CONFIG  # noqa: E402
from train.rundir import readable  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOTAL = 256
ARGS = ["--config", str(MASKABLE_CONFIG), "--n-envs", "2", "--n-steps", "64",
        "--batch-size", "64", "--n-epochs", "1",
        "--net-arch", "16", "16", "--eval-games", "2", "--eval-every", "128",
        "--checkpoint-every", "128", "--snapshot-every", "128", "--quiet",
        "--eval-opponents", "random", "greedy", "--bc-teacher", "greedy", "--bc-samples",
        "60", "--bc-epochs", "2", "--bc-workers", "1", "--total-steps", str(TOTAL)]

# (fault, extra arguments, expected exit status of the stopped run)
FAULTS = {
    "warm_start": ("warm_start@1", [], -signal.SIGKILL),  # nothing saved yet
    "first_eval": ("after_eval@1", [], -signal.SIGKILL),  # evaluated at 0, no checkpoint
    "eval_then_kill": ("after_eval@3", [], -signal.SIGKILL),  # eval at 256 before its ckpt
    "snapshot": ("snapshot_write@2", [], -signal.SIGKILL),  # half of snap_256 written
    "checkpoint": ("checkpoint_write@3", [], -signal.SIGKILL),  # a ckpt not yet renamed
    "best_swap": ("checkpoint_swap@1", [], -signal.SIGKILL),  # best/ moved aside
    "ctrl_c": ("after_eval@2:INT", ["--vec-env", "subproc"], 130),  # Ctrl-C, subprocesses
    "sigterm": ("after_eval@2:TERM", [], 143),  # kill / a scheduler's stop: as Ctrl-C
}


def start(run_dir: Path, fault: str, extra: list[str]) -> subprocess.Popen:
    env = {**os.environ, "ALLFIVES_FAULT": fault, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "allfives_env.cli", "train", "--run-dir", str(run_dir), *ARGS,
         *extra], env=env, cwd=run_dir.parent, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=sigint_as_in_a_terminal)


def saved_checkpoints(run_dir: Path) -> dict[str, str]:
    """Readable checkpoints on disk: name -> their card.json text."""
    return {p.name: (p / "card.json").read_text()
            for p in sorted((run_dir / "checkpoints").glob("step_*")) if readable(p) is None}


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int, str]]:
    """Every fault's run, stopped: name -> (run_dir, exit status, stderr)."""
    base = tmp_path_factory.mktemp("faults")
    procs = {}
    for name, (fault, extra, _) in FAULTS.items():
        (base / name).mkdir()
        procs[name] = (base / name / "run", start(base / name / "run", fault, extra))
    out = {}
    for name, (run_dir, proc) in procs.items():
        _, err = proc.communicate(timeout=600)
        out[name] = (run_dir, proc.returncode, err)
    return out


@pytest.mark.parametrize("name", list(FAULTS))
def test_resume_after_a_fault_finishes_and_loses_no_checkpoint(
        stopped: dict[str, tuple[Path, int, str]], name: str) -> None:
    run_dir, code, err = stopped[name]
    assert code == FAULTS[name][2], err  # the fault hit where it was aimed
    if code in (130, 143):  # Ctrl-C, SIGTERM: a checkpoint, the exact command, no traceback
        assert "Traceback" not in err and "Continue with: allfives train --run-dir" in err
        assert f"--run-dir {run_dir} --resume" in err
    before = saved_checkpoints(run_dir)
    assert main(["train", "--run-dir", str(run_dir), "--resume", "--quiet", "--vec-env",
                 "dummy"]) == 0
    final = json.loads((run_dir / "final" / "card.json").read_text())
    assert final["steps"] == TOTAL
    steps = [h["steps"] for h in final["eval_history"]]
    assert steps == sorted(set(steps)) and steps[0] == 0 and steps[-1] == TOTAL
    logged = [json.loads(x)["steps"] for x in (run_dir / "eval.jsonl").read_text().splitlines()]
    assert logged == steps  # eval.jsonl: each step once, as the card says
    after = saved_checkpoints(run_dir)
    for ckpt, text in before.items():  # every saved checkpoint kept, untouched
        assert after.get(ckpt) == text, ckpt
    assert (run_dir / "best" / "card.json").is_file()
    leftovers = [p for p in run_dir.rglob("*") if ".tmp-" in p.name or ".old-" in p.name]
    assert not leftovers
