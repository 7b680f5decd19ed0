"""``python -m allfives_train.baselines``: reference learning curves of standard learners.

Trains each learner (:mod:`allfives_train.baselines.learners`) on each view it can read, for
``--seeds`` seeds, for a fixed budget of CPU time of its process tree
(:mod:`allfives_train.baselines.runner`), ``--workers`` runs at a time, niced; then every
snapshot plays ``--games`` duplicate games against ``greedy`` and ``heuristic`` on the same
fixed deals (:mod:`allfives_train.baselines.evalpoints`). Writes, inside ``--out`` only:
``runs/<learner>-<view>-s<seed>/try<N>/`` (each attempt's trainer files, snapshots,
``done.json``, ``eval.json``), ``rows.jsonl``, ``table.md``, ``curves_cpu.png``,
``curves_wall.png``, ``curves_steps.png``, ``summary.json``. A rerun with the same ``--out``
and budget skips the runs that finished and evaluates only what is missing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NoReturn

from allfives_train.baselines import report
from allfives_train.baselines.learners import LEARNERS, VIEWS, Cell, cells, missing
from allfives_train.baselines.runner import EVAL_SEED, evaluate_run, train, write_json

LEDGER = "written.json"  # the files of --out this program wrote (the only ones it rewrites)
OUTPUTS = ("rows.jsonl", "table.md", *report.FIGURES.values(), "summary.json")
QUICK = {"cpu_minutes": 0.5, "seeds": 1, "games": 20, "snapshots": 2}
FULL = {"cpu_minutes": 1.5, "seeds": 3, "games": 100, "snapshots": 4}


class BadInput(ValueError):
    """A bad argument: one line, exit 2."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The command's options."""
    p.add_argument("--quick", action="store_true",
                   help=f"a smoke run: {QUICK['cpu_minutes']} CPU-minutes a run, 1 seed, "
                        f"{QUICK['snapshots']} snapshots, {QUICK['games']} games each "
                        "(default --out runs/baselines_quick)")
    p.add_argument("--cpu-minutes", type=float, default=None,
                   help=f"CPU budget of each run, minutes of its process tree (default "
                        f"{FULL['cpu_minutes']})")
    p.add_argument("--seeds", type=int, default=None,
                   help=f"seeds 0..N-1 (default {FULL['seeds']})")
    p.add_argument("--learners", nargs="+", default=list(LEARNERS), metavar="NAME",
                   help=f"of {', '.join(LEARNERS)} (default: all)")
    p.add_argument("--views", nargs="+", default=list(VIEWS), metavar="VIEW",
                   help="of raw, facts, heuristic; each learner runs those it can read "
                        "(default: all)")
    p.add_argument("--games", type=int, default=None,
                   help=f"games per snapshot and opponent (default {FULL['games']})")
    p.add_argument("--snapshots", type=int, default=None,
                   help=f"snapshots per run, at k/K of the budget (default {FULL['snapshots']})")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder, new or one this command wrote (default runs/baselines)")
    p.add_argument("--workers", type=int, default=2, help="runs at a time (default 2)")
    p.add_argument("--nice", type=int, default=10, help="niceness of the learners (default 10)")


def settle(args: argparse.Namespace) -> argparse.Namespace:
    """Fill the defaults (quick or full) and check every option; BadInput on a bad one."""
    base = QUICK if args.quick else FULL
    for key in ("cpu_minutes", "seeds", "games", "snapshots"):
        if getattr(args, key) is None:
            setattr(args, key, base[key])
    if args.out is None:
        args.out = Path("runs/baselines_quick" if args.quick else "runs/baselines")
    checks = [
        (0 < args.cpu_minutes <= 600, f"--cpu-minutes {args.cpu_minutes}: give 0 < M <= 600"),
        (1 <= args.seeds <= 50, f"--seeds {args.seeds}: give 1..50"),
        (2 <= args.games <= 100_000, f"--games {args.games}: give 2..100000"),
        (1 <= args.snapshots <= 50, f"--snapshots {args.snapshots}: give 1..50"),
        (1 <= args.workers <= 64, f"--workers {args.workers}: give 1..64"),
        (0 <= args.nice <= 19, f"--nice {args.nice}: give 0..19"),
    ]
    for bad in [x for x in args.learners if x not in LEARNERS]:
        checks.append((False, f"--learners {bad}: unknown; choose from {', '.join(LEARNERS)}"))
    for bad in [x for x in args.views if x not in VIEWS]:
        checks.append((False, f"--views {bad}: unknown; choose from {', '.join(VIEWS)}"))
    for ok, line in checks:
        if not ok:
            raise BadInput(line)
    out: Path = args.out
    if out.exists() and not out.is_dir():
        raise BadInput(f"--out {out}: is a file; give a new folder or one this command wrote")
    foreign = [p for p in out.iterdir() if p.suffix != ".log"] if out.is_dir() else []
    if foreign and not (out / LEDGER).is_file():  # a log file of this command's output: fine
        raise BadInput(f"--out {out}: holds files this command did not write (no {LEDGER}); "
                       "give a new or empty folder")
    return args


def pick_run(out: Path, cell: Cell, budget: float, snapshots: int) -> tuple[Path, bool]:
    """The attempt folder of ``cell``: a finished one with this budget (True), else a fresh
    ``try<N>`` (False)."""
    folder = out / "runs" / cell.name
    tries = sorted(folder.glob("try*"), key=lambda p: int(p.name[3:] or 0))
    for path in tries:
        done = path / "done.json"
        if done.is_file():
            data = json.loads(done.read_text())
            if data["cpu_budget_s"] == budget and len(data["points"]) + len(
                    data["missing_points"]) == snapshots:
                return path, True
    return folder / f"try{len(tries) + 1}", False


def run(args: argparse.Namespace) -> int:
    """Run the whole plan; 2 on bad input."""
    try:
        args = settle(args)
    except BadInput as exc:
        print(f"allfives_train.baselines: {exc}", file=sys.stderr)
        return 2
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    ledger_path = out / LEDGER
    ledger = json.loads(ledger_path.read_text()) if ledger_path.is_file() else {"files": []}
    for name in OUTPUTS:
        if (out / name).exists() and name not in ledger["files"]:
            print(f"allfives_train.baselines: {out / name} exists and is not this command's; "
                  "nothing done", file=sys.stderr)
            return 2
    ledger["files"] = sorted(set(ledger["files"]) | set(OUTPUTS) | {"runs"})
    write_json(ledger_path, ledger)
    learners = []
    for learner in args.learners:
        why = missing(learner)
        if why:
            print(why, flush=True)
        else:
            learners.append(learner)
    plan = cells(learners, args.views, args.seeds)
    budget = round(args.cpu_minutes * 60, 3)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = os.getloadavg()
    print(f"{len(plan)} runs of {budget:g} CPU s each, {args.workers} at a time; "
          f"{args.snapshots} snapshots x {args.games} games x 2 opponents; out: {out}",
          flush=True)
    lock = threading.Lock()
    run_dirs: list[Path] = []

    def job(cell: Cell) -> None:
        with lock:
            run_dir, finished = pick_run(out, cell, budget, args.snapshots)
            run_dirs.append(run_dir)
            if not finished:
                run_dir.mkdir(parents=True)
        if not finished:
            done = train(cell, run_dir, budget, args.snapshots, args.nice)
            print(f"trained {cell.name}: {done['cpu_s']:.0f} CPU s, {done['wall_s']:.0f} s wall, "
                  f"{len(done['points'])} snapshots", flush=True)
        evaluate_run(run_dir, args.games, args.nice)
        print(f"evaluated {cell.name}", flush=True)

    with ThreadPoolExecutor(args.workers) as pool:
        for future in [pool.submit(job, cell) for cell in plan]:
            future.result()
    return finish(args, out, run_dirs, started, load_before)


def finish(args: argparse.Namespace, out: Path, run_dirs: list[Path],
           started: datetime.datetime, load_before: tuple[float, float, float]) -> int:
    """Rows, table, figures and summary; 1 if the rows are inconsistent."""
    from allfives_env.benchmarks.machine import describe, format_machine

    rows = report.collect(sorted(run_dirs))
    (out / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = report.table(rows)
    (out / "table.md").write_text(text)
    when = started.strftime("%Y-%m-%d %H:%M UTC")
    title = (f"learners trained against heuristic, {args.cpu_minutes:g} CPU-min a run; "
             f"{args.games} games per point and opponent; {when}")
    for x, name in report.FIGURES.items() if rows else ():
        report.plot(rows, x, out / name, title)
    summary: dict[str, Any] = {
        "command": " ".join(["python -m allfives_train.baselines", *sys.argv[1:]]),
        "started": when,
        "finished": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": format_machine(describe()), "load_before": load_before,
        "load_after": os.getloadavg(), "cpu_budget_s": args.cpu_minutes * 60,
        "seeds": args.seeds, "snapshots": args.snapshots, "games": args.games,
        "eval_seed": EVAL_SEED, "rows": len(rows)}
    write_json(out / "summary.json", summary)
    print(text, end="")
    print(f"{summary['machine']}\nrows, table and figures in {out}", flush=True)
    problems = report.check_rows(rows)
    for line in problems:
        print(f"inconsistent: {line}", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    p = argparse.ArgumentParser(prog="python -m allfives_train.baselines",
                                description=__doc__.splitlines()[0])
    add_arguments(p)

    def error(message: str) -> NoReturn:  # one line, exit 2 (argparse prints the usage too)
        print(f"allfives_train.baselines: {message}", file=sys.stderr)
        raise SystemExit(2)

    p.error = error  # type: ignore[method-assign]
    return run(p.parse_args(argv))
