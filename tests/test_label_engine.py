"""search_distill's labels on the batched engine (train/algorithms/search_distill/label_batched.py).

The teacher's kernel values equal the scalar ``SearchAgent.rollout_means`` where the world is
known (2 seats, the unseen tiles are the other hand, so sampling plays no part; the network
teacher's: tests/test_batched_netsearch.py); a batched shard holds one row per real choice
with every legal move valued, depends on its seed alone and is the same on 1 and 2 workers;
``engine`` picks the engine, and one line refuses a batched engine for a teacher that has
none.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("torch")

from test_batched_search import assert_known_world_values  # noqa: E402
from test_label_workers import TINY, label, same_arrays, student_file  # noqa: E402

from allfives.cli import main  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.batched.bots import make_batched_bot  # noqa: E402
from allfives_env.game.observation import N_ACTIONS  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_train.algorithms.search_distill.label import (  # noqa: E402
    KEYS,
    label_engine,
    label_shard,
    load_shards,
)


@pytest.mark.parametrize("agent_id", ["search:sims=64,depth=2", "search:defend=0,sims=16"])
def test_kernel_values_are_the_scalar_rollout_means_where_the_world_is_known(
        agent_id: str) -> None:
    bot = make_batched_bot(agent_id, seed=1)

    def values_of(games, b: int) -> tuple[int, np.ndarray]:
        best = np.empty(1, dtype=np.int64)
        values = np.full((1, N_ACTIONS), np.nan)
        bot.k.search_values(np.array([b]), games.R, games.G, games.A, games.T,
                            bot.streams.of(games), bot.opts, best, values)
        return int(best[0]), values[0]

    assert_known_world_values(make_agent(agent_id, seed=2), values_of, 6000, 40)


def _shard(student: bytes, index: int, seed: int = 0) -> dict[str, np.ndarray]:
    rules = make_rules("all_fives", players=2)
    task = (rules, "search:sims=8,min_worlds=2", 0.5, 2, seed, index, "batched")
    i, n, data = label_shard(student, task)
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        out = {k: z[k] for k in z.files}
    assert i == index and n == len(out["act"]) > 20 and set(out) == set(KEYS)
    return out


def test_a_batched_shard_values_every_legal_move_and_depends_on_its_seed_alone(
        tmp_path: Path) -> None:
    student = student_file(tmp_path).read_bytes()
    a = _shard(student, 0)
    same_arrays(a, _shard(student, 0))
    assert not np.array_equal(a["obs"][:5], _shard(student, 1)["obs"][:5])
    moves = a["act"] >= 0
    assert (moves.sum(axis=1) >= 2).all()  # only real choices
    assert np.isfinite(a["val"][moves]).all() and (a["val"][~moves] == 0).all()
    assert a["obs"].dtype == a["feat"].dtype == np.float16 and a["act"].dtype == np.int16
    assert (a["feat"][~moves] == 0).all() and np.abs(a["feat"][moves]).sum(axis=1).all()


def test_one_and_two_workers_write_the_same_batched_shards(tmp_path: Path) -> None:
    student = student_file(tmp_path)
    one = label(tmp_path / "one", student, 1, "batched")
    two = label(tmp_path / "two", student, 2, "batched")
    assert len(one) >= 2 and list(one.values()) == list(two.values())
    same_arrays(load_shards(list(one)), load_shards(list(two)))


@pytest.mark.parametrize("teacher, engine, want", [
    ("search:sims=256,depth=2", "auto", "batched"),
    ("search", "batched", "batched"),
    ("search", "scalar", "scalar"),
    ("search:net=all_fives_2p", "auto", "batched"),
    ("search:net=all_fives_2p,sims=64", "scalar", "scalar"),
    ("search:net=all_fives_2p,prior=1", "auto", "scalar"),
])
def test_the_engine_field_picks_the_labelling_engine(teacher: str, engine: str,
                                                     want: str) -> None:
    assert label_engine(teacher, engine) == want


def test_a_batched_engine_for_a_teacher_without_one_gets_one_line(tmp_path: Path,
                                                                    capsys) -> None:
    run = tmp_path / "run"
    rc = main(["train", "--run-dir", str(run), *TINY, "--engine", "batched",
               "--distill-teacher", "search:net=all_fives_2p,prior=1"])
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1, err
    assert "engine" in lines[0] and "prior has no batched version" in lines[0]
    assert "use engine: auto" in lines[0]
    assert not run.exists()


def test_a_network_teachers_batched_shard_values_every_legal_move(tmp_path: Path) -> None:
    student = student_file(tmp_path).read_bytes()
    rules = make_rules("all_fives", players=2)
    task = (rules, "search:net=all_fives_2p,sims=8,min_worlds=2", 0.5, 1, 0, 0, "batched")
    _, n, data = label_shard(student, task)
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        act, val = z["act"], z["val"]
    moves = act >= 0
    assert n == len(act) > 10 and (moves.sum(axis=1) >= 2).all()
    assert np.isfinite(val[moves]).all() and (val[~moves] == 0).all()
