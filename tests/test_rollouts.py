"""The fast path's rollouts on N workers (train/games/shards.py, train/games/rollouts.py,
train/games/ray_rollouts.py): shards cut as declared; 1 and 2 local workers play the same games
(buffers compared array by array) and so train the same network; bad worker fields and a
worker that dies get one line; and (slow: it starts Ray) on a 2-node cluster simulated with
``ray.cluster_utils.Cluster`` a dmc run's rollouts are played on the worker node and train
the network a local run trains."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from allfives.cli import main  # noqa: E402
from allfives_train.algorithms.ppo_batched.net import features_of, make_net  # noqa: E402
from allfives_train.config import load_config  # noqa: E402
from allfives_train.games.rollouts import Rollouts  # noqa: E402
from allfives_train.games.shards import BUFFERS, resolve_workers, shard_sizes, split  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DMC = ROOT / "configs" / "train" / "dmc_2p.yaml"
SMALL = {"n_envs": 12, "rollout_shards": 4, "n_steps": 3}
# --device cpu: the runs compared bit for bit below differ in their workers only (a GPU's
# kernels need not give the same bits twice, and device auto takes one where there is one)
TINY = ["--config", str(DMC), "--device", "cpu", "--n-envs", "8", "--n-steps", "4",
        "--batch-size", "16",
        "--total-steps", "96", "--eval-games", "2", "--eval-every", "1000",
        "--checkpoint-every", "1000", "--snapshot-every", "32", "--quiet"]


@pytest.mark.parametrize("n_envs, shards, sizes", [
    (256, 4, [64, 64, 64, 64]), (10, 4, [3, 3, 2, 2]), (3, 4, [1, 1, 1]), (5, 1, [5])])
def test_shards_are_cut_as_equal_as_can_be(n_envs: int, shards: int, sizes: list[int]) -> None:
    assert shard_sizes(n_envs, shards) == sizes


def test_workers_hold_every_shard_once() -> None:
    assert split(4, 2) == [[0, 2], [1, 3]]
    assert split(3, 8) == [[0], [1], [2]]
    cfg = load_config(DMC, {"rollout_workers": 9, "rollout_shards": 4})
    assert resolve_workers(cfg) == 4
    small = load_config(DMC, {"rollout_workers": None, "n_envs": 8, "n_steps": 4})
    assert resolve_workers(small) == 1  # a tiny rollout stays in this process


def rollout(workers: int, epsilon: float | None) -> tuple[dict, np.ndarray]:
    torch.set_num_threads(1)
    cfg = load_config(DMC, {**SMALL, "rollout_workers": workers})
    torch.manual_seed(0)
    agent = make_net(cfg)
    envs = Rollouts(cfg, agent, features_of(agent))
    try:
        assert envs.describe()["workers"] == workers
        envs.set_self(agent.numpy_policy().arrays())
        envs.add_snapshot(agent.numpy_policy().arrays(), "snap")
        envs.reset(seed=7)
        envs.collect(agent, SMALL["n_steps"], epsilon, torch.device("cpu"))
        with torch.no_grad():  # new weights reach the workers
            for p in agent.parameters():
                p.add_(0.01)
        return envs.collect(agent, SMALL["n_steps"], epsilon, torch.device("cpu"))
    finally:
        envs.close()


@pytest.mark.parametrize("epsilon", [0.3, None], ids=["dmc", "ppo"])
def test_one_and_two_workers_play_the_same_games(epsilon: float | None) -> None:
    (one, obs1), (two, obs2) = rollout(1, epsilon), rollout(2, epsilon)
    for key in BUFFERS:
        assert one[key].shape[:2] == (SMALL["n_steps"], SMALL["n_envs"]), key
        assert torch.equal(one[key], two[key]), key
    assert np.array_equal(obs1, obs2) and one["pool"] == two["pool"]


@pytest.mark.parametrize("flag, value, says", [
    ("--rollout-workers", "0", "rollout_workers"),
    ("--rollout-shards", "0", "rollout_shards")])
def test_bad_rollout_fields_get_one_line(tmp_path: Path, capsys, flag: str, value: str,
                                         says: str) -> None:
    run = tmp_path / "run"
    rc = main(["train", "--run-dir", str(run), *TINY, flag, value])
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1 and says in lines[0], err
    assert not run.exists()


def test_a_worker_that_dies_is_said_in_one_line() -> None:
    torch.set_num_threads(1)
    cfg = load_config(DMC, {**SMALL, "rollout_workers": 2})
    agent = make_net(cfg)
    envs = Rollouts(cfg, agent, features_of(agent))
    try:
        envs.reset(seed=1)
        os.kill(envs.remote.procs[1].pid, signal.SIGKILL)
        envs.remote.procs[1].join(10)
        with pytest.raises(ChildProcessError, match="a rollout worker ended unexpectedly"):
            envs.collect(agent, 2, 0.1, torch.device("cpu"))
    finally:
        envs.close()


def weights(run: Path) -> dict[str, np.ndarray]:
    with np.load(run / "final" / "policy.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.slow
def test_one_and_two_workers_train_the_same_network(tmp_path: Path) -> None:
    for w in (1, 2):
        assert main(["train", "--run-dir", str(tmp_path / f"w{w}"), *TINY,
                     "--rollout-workers", str(w)]) == 0
    a, b = weights(tmp_path / "w1"), weights(tmp_path / "w2")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    card = json.loads((tmp_path / "w2" / "final" / "card.json").read_text())
    assert card["rollouts"] == {"shards": 2, "workers": 2, "where": "processes"}


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_on_a_simulated_cluster_the_rollouts_are_played_on_the_worker_node(
        tmp_path: Path, two_node_cluster: tuple[str, str]) -> None:
    import ray

    address, worker = two_node_cluster
    assert main(["train", "--run-dir", str(tmp_path / "ray"), *TINY, "--address", address]) == 0
    assert not ray.is_initialized()  # the run left the cluster it joined
    card = json.loads((tmp_path / "ray" / "final" / "card.json").read_text())
    assert card["rollouts"]["where"] == "ray" and card["rollouts"]["workers"] == 2
    assert set(card["rollouts"]["nodes"]) == {worker}
    assert main(["train", "--run-dir", str(tmp_path / "local"), *TINY,
                 "--rollout-workers", "1"]) == 0
    a, b = weights(tmp_path / "ray"), weights(tmp_path / "local")
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_a_copy_of_the_config_keeps_the_rollout_fields() -> None:
    cfg = load_config(DMC, {"rollout_workers": 2, "rollout_shards": 8})
    assert dataclasses.replace(cfg, n_envs=8).to_dict()["fast"]["rollout_shards"] == 8
