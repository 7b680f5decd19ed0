"""The RLlib trainer past one machine and at a clean start (slow: they start Ray):

* on a multi-node Ray cluster simulated on this machine (``ray.cluster_utils.Cluster``: a
  head and a worker node with its own CPU and a ``worker_node`` resource), a training
  iteration completes with the env runner placed on the worker node;
* without ``--address`` it starts its own Ray even when a cluster file left by an earlier
  Ray session names a dead cluster (it used to stop with "When connecting to an existing
  cluster, num_cpus and num_gpus must not be provided").
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]
ROOT = Path(__file__).resolve().parents[1]


def test_an_iteration_completes_on_a_simulated_cluster_with_runners_on_the_worker_node(
        tmp_path: Path) -> None:
    import ray
    import torch

    from allfives_train.config import load_config
    from allfives_train.rllib.cluster import TINY, WORKER_RESOURCE, simulated_cluster
    from allfives_train.rllib.run import train

    torch.set_num_threads(1)
    ray.shutdown()  # another test module's local Ray, if any
    with simulated_cluster(workers=1) as cluster:
        worker = next(iter(cluster.worker_nodes)).node_id
        head = cluster.head_node.node_id
        cfg = load_config(None, {**TINY, "run_dir": str(tmp_path / "run"),
                                 "env_runner_resources": {WORKER_RESOURCE: 0.01}})
        final = train(cfg, address=cluster.address, quiet=True)
        nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert nodes == {head, worker}
    placed = json.loads((tmp_path / "run" / "nodes.json").read_text())
    assert placed["env_runners"] == [worker] and placed["driver"] == head
    rows = list(csv.DictReader(open(tmp_path / "run" / "progress.csv")))
    assert [int(r["iteration"]) for r in rows] == [1]
    assert float(rows[0]["env_steps"]) >= TINY["train_batch_size"]
    assert (final / "learner_group" / "learner" / "rl_module" / "main").is_dir()


def test_without_address_a_stale_cluster_file_is_not_joined() -> None:
    """A fake ``ray_current_cluster`` naming a dead cluster, in the temp dir Ray reads
    (RAY_TMPDIR, short: Ray's socket paths are limited), and RAY_ADDRESS unset."""
    tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    try:
        (tmp / "ray").mkdir()
        (tmp / "ray" / "ray_current_cluster").write_text("127.0.0.1:6390\n")
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        env.update(RAY_TMPDIR=str(tmp), PYTHONPATH=str(ROOT))
        done = subprocess.run(
            [sys.executable, "-m", "allfives_train.rllib", "--quiet", "--config",
             "configs/train/rllib_table.yaml", "--iterations", "1",
             "--num-env-runners", "0", "--num-cpus", "1", "--train-batch-size", "128",
             "--minibatch-size", "128", "--num-epochs", "1", "--net-arch", "16",
             "--set", "target=60", "--bc-teacher", "null", "--run-dir", str(tmp / "run")],
            capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
        assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
        assert "num_cpus and num_gpus must not be provided" not in done.stdout + done.stderr
        assert (tmp / "run" / "final").is_dir()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
