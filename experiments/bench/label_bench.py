"""search_distill's labelling stage on each engine and on 1, 2, ... local workers: wall
time, positions per second, the speed-up over the first run, and whether every worker count
of an engine wrote the same shards (the arrays compared, shard by shard)::

    python -m experiments.bench.label_bench --workers 1 2 --positions 3000 --shard-games 2
    python -m experiments.bench.label_bench --engines scalar batched --workers 1 --positions 3000
    python -m experiments.bench.label_bench --workers 1 2 4 --teacher search:sims=64

``--engines``: ``batched`` (the teacher's numba kernel, all of a shard's games at once; a
plain ``search`` teacher only) and ``scalar`` (one game at a time), as the config field
``engine`` chooses (train/algorithms/search_distill/label_batched.py); the batched kernels are
compiled before
any clock starts.

The student is the actor of ``--student`` (a checkpoint's ``policy.npz``, default the shipped
2-seat model's), labelled as ``configs/train/distill_2p.yaml`` labels it (all_fives, 2 seats,
mix 0.5, seed 0).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from allfives_env.game.rules import make_rules
from allfives_env.inputs.shipped import shipped_dir
from allfives_train.algorithms.search_distill.label import label_all, label_engine, load_shards

STUDENT = shipped_dir("checkpoints") / "all_fives_2p" / "policy.npz"


def timed(folder: Path, args: argparse.Namespace, workers: int, engine: str
          ) -> tuple[float, float, dict[Path, int]]:
    """Label ``args.positions`` into ``folder`` with ``workers`` processes on ``engine``:
    (wall seconds, CPU seconds of this process and its workers, shards)."""
    rules = make_rules("all_fives", players=2)
    cpu0, start = cpu_seconds(), time.perf_counter()
    shards = label_all(rules, args.teacher, args.student, folder, args.positions, 0.5,
                       args.shard_games, 0, workers, lambda i, n: None, engine=engine)
    return time.perf_counter() - start, cpu_seconds() - cpu0, shards


def cpu_seconds() -> float:
    """User and system CPU time of this process and of its finished children."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def same(a: dict[Path, int], b: dict[Path, int]) -> bool:
    """Whether two runs' shards hold the same arrays, shard by shard."""
    if list(a.values()) != list(b.values()):
        return False
    for pa, pb in zip(a, b):
        x, y = load_shards([pa]), load_shards([pb])
        if any(x[k].dtype != y[k].dtype or not np.array_equal(x[k], y[k]) for k in x):
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bench.label_bench",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--engines", nargs="+", default=["batched"],
                        choices=["batched", "scalar"])
    parser.add_argument("--positions", type=int, default=3000, help="decisions to label")
    parser.add_argument("--teacher", default="search:sims=256,depth=2")
    parser.add_argument("--shard-games", type=int, default=2, help="games per shard")
    parser.add_argument("--student", type=Path, default=STUDENT)
    args = parser.parse_args(argv)
    if min(args.workers) < 1 or args.positions < 1 or args.shard_games < 1:
        print("error: --workers, --positions and --shard-games must be integers >= 1",
              file=sys.stderr)
        return 2
    try:
        return measure(args)
    except (OSError, ValueError) as exc:
        print(f"error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
              file=sys.stderr)
        return 2


def measure(args: argparse.Namespace) -> int:
    """Label with each engine and worker count in turn and print a line for each."""
    rate = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for engine in args.engines:
            if engine == "batched":  # compile the kernels (cached) before any clock starts
                label_engine(args.teacher, "batched")
                timed(Path(tmp) / "warm", argparse.Namespace(**{**vars(args), "positions": 1}),
                      1, engine)
            first: dict[Path, int] | None = None
            for w in args.workers:
                seconds, cpu, shards = timed(Path(tmp) / f"{engine}{w}", args, w, engine)
                n = sum(shards.values())
                rate = rate or n / seconds
                first = first or shards
                print(f"{engine}, {w} worker(s): {n} positions in {len(shards)} shards, "
                      f"{seconds:.1f} s ({cpu:.1f} CPU s, {cpu / seconds:.2f} cores busy), "
                      f"{n / seconds:.1f} positions/s, {n / seconds / rate:.2f}x the first "
                      f"run's rate, same shards as {args.workers[0]} worker(s): "
                      f"{same(first, shards)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
