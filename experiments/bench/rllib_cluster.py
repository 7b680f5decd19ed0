"""The same tiny RLlib config on a local Ray and on a multi-node Ray cluster simulated on
this machine (:mod:`allfives_train.rllib.cluster`)::

    python -m experiments.bench.rllib_cluster --iterations 6 --repeats 2   # steps/s: local vs cluster
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from allfives_train.rllib.cluster import TINY, WORKER_RESOURCE, simulated_cluster


def steps_per_second(run_dir: Path) -> float:
    """Env steps per training second from a run's progress.csv, the first iteration (its
    warm-up) left out when there are more."""
    rows = list(csv.DictReader(open(run_dir / "progress.csv")))
    first = {"env_steps": 0, "seconds": 0} if len(rows) == 1 else rows[0]
    return (float(rows[-1]["env_steps"]) - float(first["env_steps"])) / \
        (float(rows[-1]["seconds"]) - float(first["seconds"]))


def measure(iterations: int, workdir: Path, cluster_first: bool = False) -> dict[str, Any]:
    """The same tiny config (one env runner) on a local Ray with 2 CPUs and on a simulated
    cluster with the env runner on its worker node: env steps per second of each (after the
    first iteration)."""
    import ray

    from allfives_train.config import load_config
    from allfives_train.rllib.run import train

    out: dict[str, Any] = {}
    base = {**TINY, "iterations": iterations, "num_cpus": 2}

    def local() -> None:
        train(load_config(None, {**base, "run_dir": str(workdir / "local")}), quiet=True)
        ray.shutdown()
        out["local"] = steps_per_second(workdir / "local")

    if not cluster_first:
        local()
    with simulated_cluster() as cluster:
        cfg = load_config(None, {**base, "run_dir": str(workdir / "cluster"),
                                 "env_runner_resources": {WORKER_RESOURCE: 0.01}})
        train(cfg, address=cluster.address, quiet=True)
        out["cluster"] = steps_per_second(workdir / "cluster")
        out["cluster_nodes"] = json.loads((workdir / "cluster" / "nodes.json").read_text())
    if cluster_first:
        local()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bench.rllib_cluster",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=3,
                        help="training iterations of 512 env steps per run (default 3)")
    parser.add_argument("--repeats", type=int, default=1, help="measure this many times")
    args = parser.parse_args(argv)
    if args.iterations < 2 or args.repeats < 1:
        print("error: --iterations must be an integer >= 2 and --repeats >= 1")
        return 2
    import torch

    torch.set_num_threads(1)
    start = time.time()
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            got = measure(args.iterations, Path(tmp), cluster_first=r % 2 == 1)
        order = "cluster first" if r % 2 else "local first"
        ratio = got["cluster"] / got["local"]
        print(f"run {r + 1} ({order}): env steps/s, tiny config ({args.iterations} x 512 "
              f"steps, 1 env runner, first iteration left out): local Ray "
              f"{got['local']:.0f}, simulated 2-node cluster {got['cluster']:.0f} "
              f"(ratio {ratio:.2f}); {time.time() - start:.0f}s so far", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
