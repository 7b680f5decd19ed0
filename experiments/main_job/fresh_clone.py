"""The main job from a fresh clone with an empty compile cache: its wall time and its strength.

    python experiments/main_job/fresh_clone.py                      # the measurement (issue 64)
    python experiments/main_job/fresh_clone.py --seed 20261309      # another fresh seed
    python experiments/main_job/fresh_clone.py --train-args --total-steps 2000 --eval-games 4 \
        --games 20                                                  # a quick check of the tool

1. ``git clone`` of this repository's committed HEAD into a temporary folder (nothing of this
   checkout's ``__pycache__`` comes along, so numba's cache beside the modules is empty), and
   an empty ``NUMBA_CACHE_DIR``;
2. ``allfives train`` (the default config: the main job) from that clone, its code first on
   ``PYTHONPATH`` (through links named as the installed packages), timed from the command's
   start to its exit; its output streams through, so the stages can be watched;
3. ``allfives eval`` of the model against ``heuristic`` on ``--games`` fresh duplicate games
   (seed ``--seed``; the issue asks for seeds >= 20261308, never tuned on);
4. one closing line and a JSON report (``--json``): wall time, win rate with its 95% interval,
   the machine (CPU count, ``uptime`` before and after: the load shows how shared it was).

The training uses the installed dependencies (torch, numba, ...) of the Python running this
script. Nothing outside the temporary folder is written (but ``--json``); it is removed at the
end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the installed package names and the clone's folders they are
PACKAGES = {"allfives_env": "allfives_env", "allfives_agents": "agents",
            "allfives_train": "train"}


def uptime() -> str:
    """``/proc/loadavg``'s three load averages (the machine's load), or ``?``."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def clone(into: Path) -> Path:
    """A fresh clone of this repository's HEAD in ``into/allfives``, and a folder of links
    that puts its packages first on ``PYTHONPATH``; returns that folder."""
    repo = into / "allfives"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(repo)], check=True)
    shim = into / "path"
    shim.mkdir()
    for name, folder in PACKAGES.items():
        (shim / name).symlink_to(repo / folder, target_is_directory=True)
    return shim


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[int, float, str]:
    """Run ``cmd``, its output streamed through and kept; (status, seconds, output)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    kept = []
    for line in proc.stdout:
        print(line, end="", flush=True)
        kept.append(line)
    code = proc.wait()
    return code, time.perf_counter() - t0, "".join(kept)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000,
                        help="duplicate games against heuristic (default 1000)")
    parser.add_argument("--seed", type=int, default=20261308,
                        help="the evaluation's seed (default 20261308: fresh, never tuned on)")
    parser.add_argument("--json", type=Path, help="write the report here too")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--train-args", nargs=argparse.REMAINDER, default=[],
                        help="more flags for allfives train (last; a quick check only)")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="allfives-fresh-"))
    try:
        shim = clone(tmp)
        cache = tmp / "numba_cache"
        cache.mkdir()
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(shim),
               "PYTHONDONTWRITEBYTECODE": "1"}
        repo, run_dir = tmp / "allfives", tmp / "allfives" / "runs" / "main"
        cli = [sys.executable, "-m", "allfives.cli"]
        load_before = uptime()
        code, wall, _ = run([*cli, "train", "--run-dir", str(run_dir), *args.train_args],
                            env, repo)
        load_after = uptime()
        if code != 0:
            print(f"fresh_clone: allfives train failed (exit status {code})", file=sys.stderr)
            return 1
        out = tmp / "eval.json"
        code, eval_wall, _ = run([*cli, "eval", "--agents", f"ckpt:{run_dir / 'final'}",
                                  "heuristic", "--games", str(args.games), "--seed",
                                  str(args.seed), "--json", str(out)], env, repo)
        if code != 0:
            print(f"fresh_clone: allfives eval failed (exit status {code})", file=sys.stderr)
            return 1
        pairing = json.loads(out.read_text())["pairings"][0]
        lo, hi = pairing["ci95"]
        report = {
            "date": time.strftime("%Y-%m-%d"), "commit": _head(), "cpus": os.cpu_count(),
            "train_wall_s": round(wall, 1), "load_before": load_before,
            "load_after": load_after, "games": pairing["games"], "seed": args.seed,
            "win_rate": pairing["win_rate"], "ci95": [lo, hi],
            "train_args": args.train_args, "eval_wall_s": round(eval_wall, 1),
        }
        print(f"fresh_clone: the main job took {wall:.1f} s ({wall / 60:.2f} min) from a fresh "
              f"clone with an empty compile cache ({os.cpu_count()} CPUs, load {load_before} "
              f"before, {load_after} after); its model won {100 * pairing['win_rate']:.1f}% "
              f"[{100 * lo:.1f}, {100 * hi:.1f}] of {pairing['games']} games against heuristic "
              f"(seed {args.seed})")
        if args.json:
            args.json.write_text(json.dumps(report, indent=1) + "\n")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def _head() -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    return re.sub(r"\s", "", out.stdout) or "?"


if __name__ == "__main__":
    raise SystemExit(main())
