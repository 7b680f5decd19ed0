"""Run one learner for a CPU budget, keep its snapshots, then evaluate them.

The budget is the **CPU time of the learner's process tree** (user + system time of the
process and every descendant, reaped ones included, read from ``/proc`` every
``POLL`` seconds), counted from the launch: imports, set-up, compilation and a framework's
start-up (Ray's daemons) included. Snapshots are taken at ``k / K`` of it, ``k = 1..K``:

* by the learner itself (``sb3``, ``cleanrl``: it checks its own CPU time after each step or
  update and saves with ``allfives.save_policy``);
* by this driver from the trainer's own files (``fast``, ``dmc``: ``snapshots/snap_<steps>.npz``
  after every rollout; ``rllib``: ``checkpoint_<iteration>`` every 2 iterations): each new
  file is stamped with the tree's CPU and wall time when first seen, and at each fraction the
  newest one is kept as the snapshot.

Files: everything goes under the run's own folder, ``<out>/runs/<cell>/try<N>``, a fresh one
per attempt; a finished attempt has ``done.json``; nothing is deleted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from allfives_train.baselines.learners import SNAPSHOTS, Cell, command

POLL = 0.25
EVAL_SEED = 20261312  # the evaluation deals; every snapshot plays the same ones
CLK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and its descendants (live ones, and reaped ones through their
    reaper's child times); 0.0 where ``/proc`` cannot be read."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(x) for x in fields[11:15]) / CLK
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(times.get(pid, 0.0) for pid in tree)


def child_env() -> dict[str, str]:
    """One thread per learner process; checkpoints this run wrote load as trusted."""
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                "NUMBA_NUM_THREADS": "1", "RAY_DEDUP_LOGS": "0", "PYTHONUNBUFFERED": "1"})
    return env


def niced(cmd: list[str], nice: int) -> list[str]:
    """``cmd`` run at niceness ``nice`` at least."""
    delta = max(0, nice - os.nice(0))
    return ["nice", "-n", str(delta), *cmd] if delta and shutil.which("nice") else cmd


class Watch:
    """The driver's record of the trainer's snapshot files (for ``npz`` and ``rllib``)."""

    def __init__(self, kind: str, train_dir: Path) -> None:
        self.kind, self.train_dir = kind, train_dir
        self.seen: dict[str, dict[str, float]] = {}

    def poll(self, cpu: float, wall: float) -> None:
        if self.kind == "npz":
            found = (self.train_dir / "snapshots").glob("snap_*.npz")
        else:
            found = self.train_dir.glob("checkpoint_*")
        for path in found:
            if path.name not in self.seen and ".tmp" not in path.name:
                self.seen[path.name] = {"cpu_s": cpu, "wall_s": wall}

    def newest(self) -> str | None:
        return max(self.seen, default=None)


def keep_snapshot(watch: Watch, name: str, target: Path, players: int) -> dict[str, Any]:
    """Copy the trainer's snapshot ``name`` to ``target`` as something an agent id plays."""
    source = (watch.train_dir / "snapshots" / name if watch.kind == "npz"
              else watch.train_dir / name)
    if watch.kind == "npz":
        import numpy as np

        from allfives_agents.trained.save_policy import save_policy

        with np.load(source, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
        save_policy(arrays, target, players=players)
        return {"agent": f"ckpt:{target}", "steps": int(re.findall(r"\d+", name)[-1])}
    shutil.copytree(source, target)  # the batched engine's also holds a policy.npz: ckpt:
    agent = "ckpt" if (target / "policy.npz").is_file() else "rllib"
    return {"agent": f"{agent}:{target}", "iteration": int(re.findall(r"\d+", name)[-1])}


def rllib_steps(train_dir: Path, points: list[dict[str, Any]]) -> None:
    """Fill in the env steps of RLlib snapshots from the run's progress.csv."""
    steps: dict[int, int] = {}
    progress = train_dir / "progress.csv"
    if progress.is_file():
        import csv

        with open(progress) as fh:
            for row in csv.DictReader(fh):
                steps[int(row["iteration"])] = int(float(row["env_steps"]))
    for point in points:
        if "iteration" in point:
            point["steps"] = steps.get(point["iteration"], 0)


def stop(proc: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """SIGTERM the learner (it saves and shuts down), then its whole group."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def train(cell: Cell, run_dir: Path, cpu_seconds: float, snapshots: int, nice: int,
          log: Any = None) -> dict[str, Any]:
    """Train ``cell`` for ``cpu_seconds`` of its process tree; returns its ``done.json``."""
    kind = SNAPSHOTS[cell.learner]
    (run_dir / "snaps").mkdir(parents=True, exist_ok=True)
    watch = Watch(kind, run_dir / "train")
    points: list[dict[str, Any]] = []
    began = time.time()
    with open(run_dir / "learner.log", "wb") as out:
        proc = subprocess.Popen(niced(command(cell, run_dir, cpu_seconds, snapshots), nice),
                                stdout=out, stderr=subprocess.STDOUT, env=child_env(),
                                process_group=0)
        cpu = 0.0
        hard = cpu_seconds * 1.5 + 60  # a learner that ignores its budget is stopped here
        try:
            while proc.poll() is None:
                time.sleep(POLL)
                cpu = max(cpu, tree_cpu(proc.pid))
                wall = time.time() - began
                if kind == "self":
                    if cpu > hard:
                        break
                    continue
                watch.poll(cpu, wall)
                while (len(points) < snapshots
                       and cpu >= cpu_seconds * (len(points) + 1) / snapshots):
                    newest = watch.newest()
                    k = len(points) + 1
                    if newest is None:  # nothing saved yet (start-up): no point here
                        points.append({"k": k, "missing": True})
                        continue
                    point = keep_snapshot(watch, newest, run_dir / "snaps" / f"snap_{k}", 2)
                    points.append({"k": k, **watch.seen[newest], **point})
                if len(points) >= snapshots:
                    break
        finally:
            stop(proc)
    if kind == "self":
        points = self_points(run_dir / "snaps", began)
    elif kind == "rllib":
        rllib_steps(run_dir / "train", points)
    done = {"cell": cell.name, "learner": cell.learner, "view": cell.view, "seed": cell.seed,
            "cpu_budget_s": cpu_seconds, "cpu_s": cpu, "wall_s": time.time() - began,
            "returncode": proc.returncode, "points": [p for p in points if not p.get("missing")],
            "missing_points": [p["k"] for p in points if p.get("missing")]}
    write_json(run_dir / "done.json", done)
    return done


def self_points(snaps: Path, began: float) -> list[dict[str, Any]]:
    """The points a learner wrote itself (``points.jsonl``), wall time from the launch."""
    rows: list[dict[str, Any]] = []
    path = snaps / "points.jsonl"
    if path.is_file():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            snap = snaps / f"snap_{row['k']}"
            rows.append({"k": row["k"], "steps": row["steps"], "cpu_s": row["cpu_s"],
                         "wall_s": row["time"] - began, "agent": f"ckpt:{snap}"})
    return rows


def write_json(path: Path, data: Any) -> None:
    """Write a fresh JSON file (under a temporary name, renamed into place)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def evaluate_run(run_dir: Path, games: int, nice: int) -> None:
    """Evaluate the run's snapshots in a child process (``eval.json``), niced."""
    cmd = [sys.executable, "-m", "allfives_train.baselines.evalpoints", str(run_dir),
           "--games", str(games)]
    env = child_env()
    env["ALLFIVES_TRUST_CHECKPOINT"] = "1"  # RLlib checkpoints this program's run wrote
    with open(run_dir / "eval.log", "wb") as out:
        subprocess.run(niced(cmd, nice), stdout=out, stderr=subprocess.STDOUT, env=env,
                       check=False)
