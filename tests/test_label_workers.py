"""search_distill's labels on N workers (train/algorithms/search_distill/label.py,
train/algorithms/search_distill/ray_label.py): 1 and 2
local processes write the same shards; ``label_workers`` and ``address`` refuse bad values in
one line; without Ray an address gets one line; and (slow: it starts Ray) on a 2-node cluster
simulated with ``ray.cluster_utils.Cluster`` a recipe's search_distill stage labels every
shard on the worker node, the shards are those of a local run, and the recipe ends with its
final checkpoint."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

torch = pytest.importorskip("torch")

from allfives.cli import main  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_train.algorithms.search_distill.label import NODES_FILE, label_all, load_shards  # noqa: E402
from allfives_train.algorithms.search_distill.trainer import make_student  # noqa: E402
from allfives_train.config import load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "train" / "distill_2p.yaml"
TEACHER = "search:sims=8,min_worlds=2"
TINY = ["--config", str(CONFIG), "--init-from", "null", "--net-arch", "16", "16",
        "--distill-teacher", TEACHER, "--distill-shard-games", "1", "--distill-epochs", "1",
        "--eval-games", "2", "--quiet", "--total-steps", "300"]


def student_file(folder: Path) -> Path:
    """A fresh heuristic-residual student, saved as a run saves it."""
    torch.set_num_threads(1)
    cfg = load_config(CONFIG, {"init_from": None, "net_arch": [16, 16]})
    path = folder / "student.npz"
    np.savez(path, allow_pickle=False, **make_student(cfg).numpy_policy().arrays())
    return path


def label(folder: Path, student: Path, workers: int, engine: str = "scalar"
          ) -> dict[Path, int]:
    seen: list[int] = []
    out = label_all(make_rules("all_fives", players=2), TEACHER, student, folder, 200, 0.5, 1,
                    3, workers, lambda i, n: seen.append(i), engine=engine)
    assert sorted(seen) == list(range(len(seen))) and len(seen) >= len(out)
    return out


def same_arrays(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), key


def test_one_and_two_local_workers_write_the_same_shards(tmp_path: Path) -> None:
    student = student_file(tmp_path)
    one = label(tmp_path / "one", student, 1)
    two = label(tmp_path / "two", student, 2)
    assert len(one) >= 2  # several shards, so two workers had one each at once
    assert list(one.values()) == list(two.values())
    same_arrays(load_shards(list(one)), load_shards(list(two)))
    assert not (tmp_path / "two" / NODES_FILE).exists()  # local processes: no Ray nodes


@pytest.mark.parametrize("flags, words", [
    (["--label-workers", "0"], "label_workers=0: must be null (one per core) or an integer"),
    (["--address", "host 1:6379"], "address='host 1:6379': must be null (local processes)"),
    (["--address", ""], "address='': must be null"),
    (["--address", "nohost"], "address='nohost': must be auto or a Ray cluster's host:port"),
])
def test_bad_worker_fields_get_one_line(tmp_path: Path, capsys, flags: list[str],
                                        words: str) -> None:
    run = tmp_path / "run"
    rc = main(["train", "--run-dir", str(run), *TINY, *flags])
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1 and words in lines[0], err
    assert not run.exists()


def test_an_address_without_ray_gets_one_line(tmp_path: Path, capsys,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    run = tmp_path / "run"
    rc = main(["train", "--run-dir", str(run), *TINY, "--address", "auto"])
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1, err
    assert "labelling on a Ray cluster needs Ray" in lines[0] and "[rllib]" in lines[0]
    assert not run.exists()


def test_an_address_where_nothing_answers_gets_one_line_at_once(tmp_path: Path,
                                                                capsys) -> None:
    """Port 1 of this machine refuses at once (ray.init would retry it for minutes)."""
    pytest.importorskip("ray")
    run = tmp_path / "run"
    rc = main(["train", "--run-dir", str(run), *TINY, "--address", "127.0.0.1:1"])
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1, err
    assert "address='127.0.0.1:1': no Ray cluster answers at 127.0.0.1:1" in lines[0]
    assert not run.exists()


def tiny_recipe(folder: Path) -> Path:
    """A recipe of one search_distill stage, as tiny as TINY."""
    path = folder / "recipe.yaml"
    path.write_text(yaml.safe_dump({"recipe": "tiny", "run_dir": str(folder / "run"), "stages": [
        {"name": "distill", "extends": str(CONFIG), "init_from": None, "net_arch": [16, 16],
         "distill_teacher": TEACHER, "distill_shard_games": 1, "distill_epochs": 1,
         "eval_games": 2, "total_steps": 300}]}))
    return path


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_on_a_simulated_cluster_a_recipes_labels_are_made_on_the_worker_node(
        tmp_path: Path, two_node_cluster: tuple[str, str]) -> None:
    import ray

    address, worker = two_node_cluster
    rc = main(["train", "--config", str(tiny_recipe(tmp_path)), "--quiet",
               "--address", address])
    assert rc == 0
    assert not ray.is_initialized()  # the run left the cluster it joined
    stage = tmp_path / "run" / "1_distill"
    card = json.loads((tmp_path / "run" / "final" / "card.json").read_text())
    assert card["recipe"]["stages"][0]["name"] == "distill"
    m = card["distill"]["shards"]
    assert card["config"]["address"] == address and card["distill"]["labelled"] >= 300
    nodes = json.loads((stage / "labels" / NODES_FILE).read_text())
    assert set(nodes) >= {str(i) for i in range(m)} and set(nodes.values()) == {worker}
    local = label_all(make_rules("all_fives", players=2), TEACHER, stage / "student.npz",
                      tmp_path / "local", 300, 0.5, 1, 0, 1, lambda i, n: None,
                      engine=card["distill"]["engine"])
    assert len(local) == m
    ours = [stage / "labels" / f"shard_{i:06d}.npz" for i in range(m)]
    same_arrays(load_shards(ours), load_shards(list(local)))


def test_a_stopped_pool_ends_the_shards_under_way_at_once() -> None:
    """Ctrl-C or SIGTERM while shards are labelled: the workers end now, rather than when
    their shards finish (a minute each at the shipped teacher's strength)."""
    import time

    from allfives_train.algorithms.search_distill.label import LocalPool

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with LocalPool(b"", 1) as local:
            shard = local.pool.submit(time.sleep, 120)
            while not shard.running():
                time.sleep(0.05)
            procs = list(local.pool._processes.values())
            raise KeyboardInterrupt
    for proc in procs:
        proc.join(20)
    assert procs and not any(_running(proc.pid) for proc in procs)
    assert time.monotonic() - started < 60


def _running(pid: int | None) -> bool:
    """Whether the process ``pid`` still runs (not ended, nor a zombie). Asked of the OS, as
    the pool's own thread may reap a worker first, and then ``Process.is_alive`` of the
    same process in this thread can wrongly stay True (its ``waitpid`` finds no child)."""
    import os

    assert pid is not None
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the process table
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


HALF_SENT = """
import os, struct, time
from allfives_train.algorithms.search_distill.label import LocalPool
try:
    with LocalPool(b"", 1) as pool:
        assert pool.pool.submit(int, 1).result(timeout=60) == 1  # a worker and the thread up
        writer = pool.pool._result_queue._writer
        os.write(writer.fileno(), struct.pack("!i", 1 << 20) + b"x" * 10)  # half a shard
        time.sleep(0.5)  # the executor's thread now waits in recv() for the rest
        raise KeyboardInterrupt  # a stop, as SIGTERM or Ctrl-C raises it
except KeyboardInterrupt:
    print("stopped", flush=True)
"""


def test_a_stop_with_half_a_shard_in_the_pipe_still_exits() -> None:
    """A worker killed while sending its shard leaves half a message in the result pipe; the
    stop must still end the process (it used to hang at exit, waiting for the rest)."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", HALF_SENT], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "stopped" in out.stdout, out.stderr[-2000:]
