"""Fault injection (issues 9 and 33): a small training run of every ``algo`` (maskable_ppo,
ppo_batched, dmc, search_distill) and of the RLlib backend is stopped at chosen moments:
killed with SIGKILL (during the warm start, after its first evaluation and before any
checkpoint, between an evaluation and its checkpoint, during a snapshot, a label shard or a
checkpoint write, while ``best/`` is being replaced) or interrupted with Ctrl-C (SIGINT) or
SIGTERM. Then the command that finishes it, the same command again or ``--resume``, always
finishes the run with a valid final checkpoint, and no checkpoint (or label shard) that was on
disk is lost or rewritten. A run stopped before its first checkpoint is started over by either
command; a fresh command over a run that saved one is refused and changes nothing.

Each moment is hit deterministically through ``ALLFIVES_FAULT``
(:mod:`allfives_train.shell.faults`): the
training subprocess stops itself there. The stopped runs of one algo go a few side by side;
the finishing commands run in this process (torch already imported) to keep the test short.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from subprocs import sigint_as_in_a_terminal  # noqa: E402

from allfives.cli import main  # noqa: E402
from allfives_train.config import MASKABLE_CONFIG  # noqa: E402
from allfives_train.shell.rundir import readable  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs" / "train"
KILL, INT, TERM = -signal.SIGKILL, 128 + signal.SIGINT, 128 + signal.SIGTERM

# ---------------------------------------------------------------------------- the runs
MASKABLE = ["--config", str(MASKABLE_CONFIG), "--n-envs", "2", "--n-steps", "64",
            "--batch-size", "64", "--n-epochs", "1",
            "--net-arch", "16", "16", "--eval-games", "2", "--eval-every", "128",
            "--checkpoint-every", "128", "--snapshot-every", "128", "--quiet",
            "--eval-opponents", "random", "greedy", "--bc-teacher", "greedy", "--bc-samples",
            "60", "--bc-epochs", "2", "--bc-workers", "1", "--total-steps", "256"]
# rollouts of 64 steps: evaluations and snapshots every 64, checkpoints every 128
FAST = ["--config", str(CONFIGS / "fast_2p.yaml"), "--engine", "scalar", "--device", "cpu",
        "--n-envs", "4", "--n-steps", "16", "--batch-size", "32", "--n-epochs", "1",
        "--net-arch", "16", "16", "--eval-games", "2", "--eval-every", "64",
        "--checkpoint-every", "128", "--snapshot-every", "64", "--eval-opponents", "random",
        "greedy", "--best-metric", "greedy", "--quiet", "--total-steps", "256"]
# rollouts of 128 steps: evaluations every 128, checkpoints every 256
DMC = ["--config", str(CONFIGS / "dmc_2p.yaml"), "--init-from",
       str(ROOT / "checkpoints" / "all_fives_2p"), "--device", "cpu", "--n-envs", "8",
       "--n-steps", "16", "--batch-size", "64", "--n-epochs", "1", "--eval-games", "2",
       "--eval-every", "128", "--checkpoint-every", "256", "--snapshot-every", "128",
       "--quiet", "--total-steps", "512"]
# label shards of one game each (about 60 positions), then the fit and one checkpoint
DISTILL = ["--config", str(CONFIGS / "distill_2p.yaml"), "--init-from", "null",
           "--net-arch", "16", "16", "--distill-teacher", "search:sims=8,min_worlds=2",
           "--distill-shard-games", "1", "--distill-epochs", "2", "--eval-games", "2",
           "--bc-workers", "1", "--quiet", "--total-steps", "300"]
# the default config (``allfives train`` with no arguments: ppo_batched), made tiny
FAST_SMALL = ["--n-envs", "4", "--n-steps", "16", "--batch-size", "32", "--n-epochs", "1",
                 "--eval-games", "2", "--eval-every", "64", "--checkpoint-every", "128",
                 "--snapshot-every", "64", "--device", "cpu", "--quiet", "--total-steps", "128"]
ARGS = {"maskable_ppo": MASKABLE, "ppo_batched": FAST, "dmc": DMC, "search_distill": DISTILL}
TOTAL = {"maskable_ppo": 256, "ppo_batched": 256, "dmc": 512, "search_distill": 300}
STATE = {"maskable_ppo": "model.zip", "ppo_batched": "trainer.pt", "dmc": "trainer.pt",
         "search_distill": "trainer.pt"}


@dataclasses.dataclass(frozen=True)
class Case:
    algo: str
    fault: str  # ALLFIVES_FAULT
    code: int  # the stopped run's exit status (the fault hit where it was aimed)
    saved: bool  # whether it had saved a checkpoint (or a label shard) when it stopped
    again: str = "resume"  # the finishing command: "resume", or "same" (the command again)
    extra: tuple[str, ...] = ()


CASES = {
    # MaskablePPO (train/algorithms/maskable_ppo/trainer.py)
    "maskable-warm_start": Case("maskable_ppo", "warm_start@1", KILL, False),
    "maskable-first_eval": Case("maskable_ppo", "after_eval@1", KILL, False),  # eval at 0
    "maskable-first_eval_same": Case("maskable_ppo", "after_eval@1", KILL, False, "same"),
    "maskable-eval_then_kill": Case("maskable_ppo", "after_eval@3", KILL, True),  # 256
    "maskable-snapshot": Case("maskable_ppo", "snapshot_write@2", KILL, True),  # snap_256
    "maskable-checkpoint": Case("maskable_ppo", "checkpoint_write@3", KILL, True),
    "maskable-best_swap": Case("maskable_ppo", "checkpoint_swap@1", KILL, True,  # best/ again
                               extra=("--best-metric", "random", "--bc-teacher", "null",
                                      "--seed", "1")),
    "maskable-ctrl_c": Case("maskable_ppo", "after_eval@2:INT", INT, True,
                            extra=("--vec-env", "subproc")),  # Ctrl-C, subprocesses
    "maskable-sigterm": Case("maskable_ppo", "after_eval@2:TERM", TERM, True),
    # the fast path (train/algorithms/ppo_batched/trainer.py), the default config's algo
    "fast-first_eval_same": Case("ppo_batched", "after_eval@1", KILL, False, "same"),
    "fast-before_checkpoint": Case("ppo_batched", "after_eval@2", KILL, False),  # eval 64
    "fast-eval_then_kill": Case("ppo_batched", "after_eval@5", KILL, True),  # eval 256
    "fast-snapshot": Case("ppo_batched", "snapshot_write@3", KILL, True),  # snap_192
    "fast-checkpoint": Case("ppo_batched", "checkpoint_write@3", KILL, True),
    "fast-best_swap": Case("ppo_batched", "checkpoint_swap@1", KILL, True,  # best/ again
                           extra=("--seed", "8", "--best-metric", "random")),
    "fast-ctrl_c_early": Case("ppo_batched", "after_eval@1:INT", INT, False, "same"),
    "fast-ctrl_c": Case("ppo_batched", "after_eval@3:INT", INT, True),
    "fast-sigterm": Case("ppo_batched", "after_eval@4:TERM", TERM, True),
    # Deep Monte-Carlo (train/algorithms/dmc/trainer.py on the fast path's loop)
    "dmc-first_eval_same": Case("dmc", "after_eval@1", KILL, False, "same"),
    "dmc-before_checkpoint": Case("dmc", "after_eval@2", KILL, False),  # eval at 128
    "dmc-eval_then_kill": Case("dmc", "after_eval@4", KILL, True),  # eval at 384
    "dmc-sigterm": Case("dmc", "after_eval@4:TERM", TERM, True),
    # search distillation (train/algorithms/search_distill/trainer.py)
    "distill-first_eval_same": Case("search_distill", "after_eval@1", KILL, False, "same"),
    "distill-first_eval": Case("search_distill", "after_eval@1", KILL, False),
    "distill-shard": Case("search_distill", "label_shard@2", KILL, True),
    "distill-checkpoint": Case("search_distill", "checkpoint_write@2", KILL, True),
    "distill-ctrl_c": Case("search_distill", "label_shard@2:INT", INT, True),
    "distill-sigterm_early": Case("search_distill", "after_eval@1:TERM", TERM, False),
}


def start(run_dir: Path, args: list[str], fault: str, log: Path) -> subprocess.Popen:
    """``allfives train --run-dir run_dir *args`` in a new session, stopping at ``fault``;
    its output goes to ``log`` (a worker that outlives it cannot hold the test up)."""
    env = {**os.environ, "ALLFIVES_FAULT": fault, "PYTHONPATH": str(ROOT)}
    with open(log, "w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "allfives.cli", "train", "--run-dir", str(run_dir),
             *args], env=env, cwd=run_dir.parent, stdout=subprocess.DEVNULL, stderr=out,
            start_new_session=True, preexec_fn=sigint_as_in_a_terminal)


def end_session(sid: int) -> None:
    """Kill, by pid, every process left in the session ``sid`` of a stopped run (a ``kill -9``
    of Ray's driver leaves some of its helpers)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # field 6: the session id
            try:
                os.kill(int(stat.parent.name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def session_gone(sid: int, wait_s: float = 20.0) -> bool:
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        alive = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                alive.append(stat.parent.name)
        if not alive:
            return True
        time.sleep(0.2)
    return False


def stop_runs(base: Path, todo: dict[str, tuple[list[str], str]], side_by_side: int = 4
              ) -> dict[str, tuple[Path, int, str]]:
    """Run each ``name: (args, fault)`` to its fault, ``side_by_side`` at once: name ->
    (run_dir, exit status, stderr). Every process a stopped run started ends with it."""
    out: dict[str, tuple[Path, int, str]] = {}
    names = list(todo)
    for i in range(0, len(names), side_by_side):
        procs = {}
        for name in names[i:i + side_by_side]:
            (base / name).mkdir()
            args, fault = todo[name]
            procs[name] = start(base / name / "run", args, fault, base / name / "stderr.txt")
        for name, proc in procs.items():
            code = proc.wait(timeout=900)
            end_session(proc.pid)
            assert session_gone(proc.pid), f"{name}: processes of the stopped run outlived it"
            out[name] = (base / name / "run", code, (base / name / "stderr.txt").read_text())
    return out


class Stopped:
    """The stopped runs, made the first time a test of their algo asks (``-k`` stays cheap)."""

    def __init__(self, base: Path) -> None:
        self.base, self.runs = base, dict[str, tuple[Path, int, str]]()

    def get(self, name: str) -> tuple[Path, int, str]:
        if name not in self.runs:
            algo = CASES[name].algo
            todo = {n: ([*ARGS[c.algo], *c.extra], c.fault) for n, c in CASES.items()
                    if c.algo == algo}
            self.runs.update(stop_runs(self.base, todo))
        return self.runs[name]


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Stopped:
    return Stopped(tmp_path_factory.mktemp("faults"))


# ---------------------------------------------------------------------------- checks
def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def saved_work(run_dir: Path, state_file: str) -> dict[str, str]:
    """What a resume must keep: readable checkpoints (name -> their card.json text) and
    label shards (name -> their digest)."""
    found = {p.name: (p / "card.json").read_text()
             for p in sorted((run_dir / "checkpoints").glob("step_*"))
             if readable(p, state_file) is None}
    found.update({p.name: digest(p) for p in sorted((run_dir / "labels").glob("shard_*.npz"))})
    return found


def leftovers(run_dir: Path) -> list[Path]:
    return [p for p in run_dir.rglob("*") if ".tmp-" in p.name or ".old-" in p.name]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_a_stopped_run_finishes_and_loses_nothing(stopped: Stopped, name: str,
                                                  capsys: pytest.CaptureFixture) -> None:
    case = CASES[name]
    run_dir, code, err = stopped.get(name)
    assert code == case.code, err[-3000:]  # the fault hit where it was aimed
    if code in (INT, TERM):  # a graceful stop: the exact command, no traceback
        assert "Traceback" not in err, err[-3000:]
        assert ("Continue with: allfives train --run-dir" if case.saved else
                "Start it again (from the beginning) with: allfives train --run-dir") in err
        assert f"--run-dir {run_dir} --resume" in err
    state_file = STATE[case.algo]
    before = saved_work(run_dir, state_file)
    assert bool(before) == case.saved, sorted(before)
    fresh = ["train", "--run-dir", str(run_dir), *ARGS[case.algo], *case.extra]
    if case.saved:  # a fresh command over a run that saved something: refused, nothing changed
        capsys.readouterr()
        assert main(fresh) == 2
        assert "already holds a run: continue it with --resume" in capsys.readouterr().err
        kept = saved_work(run_dir, state_file)  # (a checkpoint a kill had moved aside is back)
        assert all(kept.get(saved) == text for saved, text in before.items())
    again = fresh if case.again == "same" else \
        ["train", "--run-dir", str(run_dir), "--resume", "--quiet"] + \
        (["--vec-env", "dummy"] if case.algo == "maskable_ppo" else [])
    capsys.readouterr()
    assert main(again) == 0
    warnings = capsys.readouterr().err
    if not case.saved and code == KILL:  # what the stopped run left is cleared, with a line
        assert "saved no checkpoint" in warnings and "starting it over" in warnings, warnings

    final = json.loads((run_dir / "final" / "card.json").read_text())
    assert readable(run_dir / "final", state_file) is None
    total = final["distill"]["positions"] if case.algo == "search_distill" else \
        TOTAL[case.algo]
    assert final["steps"] == total >= TOTAL[case.algo]
    assert final["config"]["algo"] == case.algo
    steps = [h["steps"] for h in final["eval_history"]]
    assert steps == sorted(set(steps)) and steps[0] == 0 and steps[-1] == total
    logged = [json.loads(x)["steps"] for x in (run_dir / "eval.jsonl").read_text().splitlines()]
    assert logged == steps  # eval.jsonl: each step once, as the card says
    after = saved_work(run_dir, state_file)
    for saved, text in before.items():  # every saved checkpoint and shard kept, untouched
        assert after.get(saved) == text, saved
    assert (run_dir / "best" / "card.json").is_file()
    assert not leftovers(run_dir)
    assert "unreadable" not in warnings


def test_a_fast_path_run_killed_before_its_first_checkpoint_starts_over(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The run directory a ``kill -9`` of ``allfives train`` (``selfplay_2p.yaml``) leaves
    before its first checkpoint: config.yaml, eval.jsonl, best/, an empty snapshots/. Both
    ``--resume`` and the same command start it over (not "no checkpoint to resume", not
    "already holds a run")."""
    for again in (["--resume"], []):
        run = tmp_path / f"run{len(again)}"
        (run / "snapshots").mkdir(parents=True)
        (run / "best").mkdir()
        (run / "config.yaml").write_text((CONFIGS / "selfplay_2p.yaml").read_text())
        (run / "eval.jsonl").write_text('{"steps": 0, "wall_time_s": 3.0, "results": {}}\n{"st')
        (run / ".lock").write_text('{"pid": 999999999, "host": "elsewhere"}\n')
        files = {n: {"size": (run / n).stat().st_size} for n in ("config.yaml", "eval.jsonl")}
        (run / "manifest.json").write_text(json.dumps(  # what the run recorded writing
            {"format": "allfives-run-manifest/1", "files": files}))
        assert main(["train", "--config", str(CONFIGS / "selfplay_2p.yaml"), "--run-dir",
                     str(run), *FAST_SMALL, *again]) == 0
        err = capsys.readouterr().err
        assert "starting it over" in err and "found config.yaml, eval.jsonl" in err, err
        card = json.loads((run / "final" / "card.json").read_text())
        assert card["config"]["algo"] == "ppo_batched"
        assert card["steps"] == 128 and card["eval_history"][0]["steps"] == 0
        assert len((run / "eval.jsonl").read_text().splitlines()) == len(card["eval_history"])


@pytest.mark.parametrize("theirs, ours, switch", [
    ("maskable-sigterm", "ppo_batched", ["--algo", "ppo_batched", "--bc-teacher", "null"]),
    ("fast-sigterm", "maskable_ppo", ["--algo", "maskable_ppo", "--engine", "auto"]),
])
def test_a_directory_with_another_algos_checkpoints_is_not_cleared(
        stopped: Stopped, capsys: pytest.CaptureFixture, theirs: str, ours: str,
        switch: list[str]) -> None:
    """A run of one algo in the directory of another's (the fast path's checkpoints hold no
    model.zip, MaskablePPO's no trainer.pt), fresh or ``--resume``, is refused in one line:
    the checkpoints there are not taken for leftovers of a run that saved nothing."""
    run_dir, _, _ = stopped.get(theirs)
    state_file = STATE[CASES[theirs].algo]
    before = saved_work(run_dir, state_file)
    assert before
    for again in ([], ["--resume", *switch]):
        capsys.readouterr()
        assert main(["train", "--run-dir", str(run_dir), *ARGS[ours], *again]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and "no checkpoint this command can resume" in lines[0] \
            and "nothing was deleted" in lines[0], lines
        assert saved_work(run_dir, state_file) == before


# ---------------------------------------------------------------------------- RLlib
RLLIB = ["--config", str(ROOT / "configs" / "train" / "rllib_table.yaml"),  # algo rllib_ppo
         "--iterations", "4", "--num-env-runners", "0",
         "--train-batch-size", "256", "--minibatch-size", "128", "--num-epochs", "1",
         "--net-arch", "32", "--checkpoint-every", "2", "--snapshot-every", "1",
         "--snapshot-keep", "2", "--set", "target=60", "--bc-teacher", "null",
         "--num-cpus", "1", "--quiet"]  # the table config's pool: bots, self, snapshots
RLLIB_CASES = {
    "kill_before_checkpoint": Case("rllib", "rllib_iteration@1", KILL, False, "same"),
    "kill_in_checkpoint_write": Case("rllib", "checkpoint_write@2", KILL, True),
    "ctrl_c": Case("rllib", "rllib_iteration@1:INT", INT, True),
    "sigterm": Case("rllib", "rllib_iteration@3:TERM", TERM, True),
}


@pytest.fixture(scope="module")
def rllib_stopped(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """Every RLlib case run to its fault (two at a time), then Ray in this process for the
    finishing commands; no Ray process is left behind."""
    pytest.importorskip("ray.rllib")
    import ray

    base = tmp_path_factory.mktemp("rllib_faults")
    yield stop_runs(base, {n: (RLLIB, c.fault) for n, c in RLLIB_CASES.items()}, 2)
    ray.shutdown()


def rllib_saved(run_dir: Path) -> dict[str, str]:
    return {p.name: (p / "allfives_rllib.json").read_text()
            for p in sorted(run_dir.glob("checkpoint_*"))}


def module_state(checkpoint: Path, module: str) -> dict:
    from ray.rllib.core.rl_module.rl_module import RLModule

    path = checkpoint / "learner_group" / "learner" / "rl_module" / module
    return RLModule.from_checkpoint(str(path)).get_state()


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
@pytest.mark.parametrize("name", list(RLLIB_CASES))
def test_a_stopped_rllib_run_finishes(rllib_stopped: dict, name: str,
                                      capsys: pytest.CaptureFixture) -> None:
    import numpy as np

    case = RLLIB_CASES[name]
    run_dir, code, err = rllib_stopped[name]
    assert code == case.code, err[-3000:]
    before = rllib_saved(run_dir)
    assert bool(before) == case.saved, sorted(before)
    if code in (INT, TERM):  # the iteration under way finished, then saved and said so
        stopped_at = int(case.fault.split("@")[1].split(":")[0])
        assert "Traceback" not in err, err[-3000:]
        assert (f"interrupted at iteration {stopped_at}; checkpoint saved to "
                f"{run_dir / f'checkpoint_{stopped_at:06d}'} (plays as rllib:{run_dir})") in err
        assert f"Continue with: allfives train --algo rllib_ppo --run-dir {run_dir} --resume" \
            in err
        card = json.loads((run_dir / "final" / "allfives_rllib.json").read_text())
        assert card["iteration"] == stopped_at
        capsys.readouterr()  # what README's next command needs: rllib:<run dir> plays
        assert main(["eval", "--agents", f"rllib:{run_dir}", "random", "--games", "2",
                     "--workers", "1", "--no-progress", "--set", "target=60",
                     "--trust-checkpoint"]) == 0, capsys.readouterr().err
    fresh = ["train", "--run-dir", str(run_dir), *RLLIB]
    if case.saved:
        capsys.readouterr()
        assert main(fresh) == 2
        assert "already holds a run: continue it with --algo rllib_ppo --resume" in \
            capsys.readouterr().err
    resumed_from = max((json.loads(t)["iteration"] for t in before.values()), default=0)
    if code in (INT, TERM):
        resumed_from = max(resumed_from, stopped_at)
    pool = json.loads(before[f"checkpoint_{resumed_from:06d}"])["snapshots"] \
        if before else None
    capsys.readouterr()
    again = fresh if case.again == "same" else \
        ["train", "--algo", "rllib_ppo", "--run-dir", str(run_dir), "--resume", "--quiet"]
    assert main(again) == 0, capsys.readouterr().err
    if not case.saved:
        assert "starting it over" in capsys.readouterr().err

    final = json.loads((run_dir / "final" / "allfives_rllib.json").read_text())
    assert final["iteration"] == 4
    assert final["snapshots"] == ["snap_3", "snap_4"] and final["snapshots_made"] == 5
    import csv

    rows = list(csv.DictReader(open(run_dir / "progress.csv")))
    assert [int(r["iteration"]) for r in rows] == [1, 2, 3, 4]  # each iteration once
    steps = [float(r["env_steps"]) for r in rows]
    assert steps == sorted(steps) and final["env_steps"] == int(steps[-1])
    after = rllib_saved(run_dir)
    for saved, text in before.items():  # every saved checkpoint kept, untouched
        assert after.get(saved) == text, saved
    assert not leftovers(run_dir)
    if pool and "snap_3" in pool:  # a frozen snapshot comes back as it was, not as main
        then = module_state(run_dir / f"checkpoint_{resumed_from:06d}", "snap_3")
        now = module_state(run_dir / "final", "snap_3")
        assert all(np.array_equal(np.asarray(then[k]), np.asarray(now[k])) for k in then)
