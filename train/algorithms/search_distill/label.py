"""Labels for ``algo: search_distill``: positions with the teacher search's value of every move.

The run plays whole games in which every seat is a :class:`Labeller`: at each decision with a
real choice it records the acting seat's observation, the per-action features of its legal
moves and each legal move's rollout mean from the teacher (``distill_teacher``, a ``search``
id; points, the same sampled worlds for every move, drawn from the seat's own view). Then
the seat plays the teacher's best move with probability ``distill_mix`` and otherwise the
student's (the network being fitted, as it was at the start), so the positions are those
both players reach.

Games come in shards of ``distill_shard_games``: shard ``i`` is ``labels/shard_<i>.npz``,
written whole (a temporary file renamed into place) and seeded by ``(seed, i)`` alone, so a
shard's content does not depend on the number of workers or on where a run was stopped.
The run uses shards ``0 .. m-1`` for the smallest ``m`` whose decisions reach
``total_steps``; ``--resume`` keeps every shard on disk and labels only the missing ones.

A shard is labelled by a worker and written by the run's own process, so the workers need no
shared disk: ``label_workers`` local processes (spawned; one per core by default), or with
``address`` as many Ray tasks at once on that cluster
(:mod:`allfives_train.algorithms.search_distill.ray_label`; the
node each shard was made on is kept in ``labels/nodes.json``).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from allfives_agents.base import make_agent
from allfives_agents.features.action_features import action_features
from allfives_agents.planning.search import SearchAgent
from allfives_agents.trained.checkpoint import PolicyAgent
from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.match import Obs, play_game
from allfives_env.game.rules import Rules
from allfives_env.game.view import SeatView
from allfives_train.games.workers import cores, worker_init
from allfives_train.shell.checkpoints import write_bytes_atomic
from allfives_train.shell.faults import fault_point

KEYS = ("obs", "feat", "act", "val")


def make_teacher(agent_id: str, seed: int | None = None) -> SearchAgent:
    """The teacher: any ``search`` id (``search:sims=256,depth=2``, ``search:net=...``)."""
    agent = make_agent(agent_id, seed=seed)
    if not isinstance(agent, SearchAgent):
        raise ValueError(f"config distill_teacher={agent_id!r}: must be a search agent id, "
                         "e.g. search:sims=256,depth=2 or search:net=<checkpoint>")
    return agent


class Labeller:
    """Every seat of every game of a shard: records each real choice with the teacher's
    per-move values, then plays the teacher's best move or the student's."""

    needs_obs = True
    name = "labeller"

    def __init__(self, seed: int, teacher: str, student: NumpyPolicy, mix: float) -> None:
        self.rng = np.random.default_rng(seed)
        self.teacher = make_teacher(teacher, seed)
        self.student = PolicyAgent(student)
        self.k = int(student.n_features)
        self.mix = mix
        self.rows: dict[str, list[np.ndarray]] = {k: [] for k in KEYS}

    def reset(self, seed: int | None = None) -> None:
        """One labeller plays a whole shard: its generators run on across games."""

    def act(self, obs: Obs, view: SeatView) -> int:
        quick = self.teacher.obvious(view)
        if quick is not None:
            return quick
        legal = list(view.legal)
        worlds = max(self.teacher.min_worlds, self.teacher.sims // len(legal))
        means = np.asarray(self.teacher.rollout_means(view, legal, worlds), np.float32)
        self.rows["obs"].append(obs["observation"].astype(np.float16))
        self.rows["feat"].append(action_features(view, self.k)[legal].astype(np.float16))
        self.rows["act"].append(np.asarray(legal, np.int16))
        self.rows["val"].append(means)
        if self.rng.random() < self.mix:
            return legal[int(np.argmax(means))]
        return self.student.act(obs, view)

    def arrays(self) -> dict[str, np.ndarray]:
        """The shard's rows as arrays (:func:`pack_rows`)."""
        return pack_rows(self.rows, self.k)


def pack_rows(rows: dict[str, list[np.ndarray]], k: int) -> dict[str, np.ndarray]:
    """Rows of :data:`KEYS` (``k`` features per move) as arrays, the move lists padded to the
    longest (act -1, feat and val 0)."""
    n = len(rows["act"])
    width = max((len(a) for a in rows["act"]), default=1)
    act = np.full((n, width), -1, np.int16)
    val = np.zeros((n, width), np.float32)
    feat = np.zeros((n, width, k), np.float16)
    for i, (a, v, f) in enumerate(zip(rows["act"], rows["val"], rows["feat"])):
        act[i, :len(a)], val[i, :len(a)], feat[i, :len(a)] = a, v, f
    obs = np.asarray(rows["obs"], np.float16).reshape(n, -1)
    return {"obs": obs, "feat": feat, "act": act, "val": val}


def shard_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def shard_path(labels: Path, index: int) -> Path:
    return labels / f"shard_{index:06d}.npz"


def label_engine(teacher: str, engine: str) -> str:
    """The engine that plays the labelling games for config ``engine`` (auto, batched or
    scalar): ``batched`` when the teacher has a batched version and the batched engine is
    installed (:mod:`allfives_train.algorithms.search_distill.label_batched`), else ``scalar``;
    ValueError (one line)
    for ``batched`` with a teacher or an install that has none."""
    if engine == "scalar":
        return "scalar"
    try:
        from allfives_agents.batched.bots import make_batched_bot

        make_batched_bot(teacher, 0)
    except (ImportError, RuntimeError, ValueError) as exc:
        if engine == "batched":
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(f"{detail}; use engine: auto") from None
        return "scalar"
    return "batched"


#: one shard's work: the rules, the teacher's id, the mix, games per shard, the run's seed,
#: the shard's index and the engine (:func:`label_engine`; the student's weights go
#: alongside, as the bytes of its ``.npz``)
ShardTask = tuple[Rules, str, float, int, int, int, str]


def label_shard(student: bytes, task: ShardTask) -> tuple[int, int, bytes]:
    """Play one shard; returns (index, decisions, the shard's ``.npz`` bytes)."""
    rules, teacher, mix, games, seed, index, engine = task
    policy = policy_from_bytes(student)
    if engine == "batched":
        from allfives_train.algorithms.search_distill.label_batched import label_games

        rows = label_games(rules, teacher, policy, mix, games, shard_seed(seed, index))
        data = pack_rows(rows, int(policy.n_features))
    else:
        labeller = Labeller(shard_seed(seed, index), teacher, policy, mix)
        for _ in range(games):
            play_game(rules, [labeller] * rules.players, int(labeller.rng.integers(1 << 31)),
                      log=False)
        data = labeller.arrays()
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, obs=data["obs"], feat=data["feat"], act=data["act"],
             val=data["val"])
    return index, len(data["act"]), buf.getvalue()


def policy_from_bytes(data: bytes) -> NumpyPolicy:
    """The student from the bytes of its ``.npz`` (data only: no pickled objects)."""
    buf = io.BytesIO(data)
    with np.load(buf, allow_pickle=False) as z:
        return NumpyPolicy.from_arrays({k: z[k] for k in z.files})


def shard_size(path: Path) -> int:
    """Decisions in a written shard of this run (ValueError naming the file if it cannot be
    read, and what to do)."""
    try:
        return _read_size(path)
    except ValueError as exc:
        raise ValueError(f"{exc}; delete it and --resume") from None


def _read_size(path: Path) -> int:
    """Decisions in the shard at ``path``, after checking from the array headers alone that
    it holds the four arrays as plain numbers (no pickled objects: a shard is data)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = set(KEYS) - set(z.files)
            if missing:
                raise ValueError(f"no {sorted(missing)}")
            shapes = {key: _plain_header(z, key) for key in KEYS}
            return int(shapes["act"][0]) if shapes["act"] else 0
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{path}: not a label shard ({detail})") from None


def _plain_header(z: Any, key: str) -> tuple[int, ...]:
    """The shape of array ``key`` of an open ``.npz``, read from its header; ValueError when
    its dtype holds Python objects (which only unpickling could read)."""
    with z.zip.open(f"{key}.npy") as f:
        version = np.lib.format.read_magic(f)
        readers = {(1, 0): np.lib.format.read_array_header_1_0,
                   (2, 0): np.lib.format.read_array_header_2_0}
        if version not in readers:
            raise ValueError(f"array {key} has .npy format {version}, not 1.0 or 2.0")
        shape, _, dtype = readers[version](f)
    if dtype.hasobject:
        raise ValueError(f"array {key} holds Python objects (pickled), not numbers")
    return tuple(shape)


def extra_shards(folder: str | Path) -> list[Path]:
    """The shards of an earlier run's label folder (``distill_extra_labels``), each checked
    readable; ValueError saying what is wrong."""
    path = Path(folder)
    if not path.is_dir():
        raise ValueError("no such folder")
    shards = sorted(path.glob("shard_*.npz"))
    if not shards:
        raise ValueError("no label shards (shard_*.npz) in it")
    for shard in shards:
        _read_size(shard)
    return shards


def needed(sizes: dict[int, int], target: int) -> int | None:
    """The shard count ``m`` if shards ``0 .. m-1`` are all written and reach ``target``
    decisions; None while that is not known yet."""
    total = 0
    for i in range(len(sizes) + 1):
        if i not in sizes:
            return None
        total += sizes[i]
        if total >= target:
            return i + 1
    return None


def label_all(rules: Rules, teacher: str, student_file: Path, labels: Path, target: int,
              mix: float, games: int, seed: int, workers: int | None,
              on_shard: Callable[[int, int], None], address: str | None = None,
              remote_pool: Callable[..., Any] | None = None,
              engine: str = "scalar") -> dict[Path, int]:
    """Write shards until shards ``0 .. m-1`` hold ``target`` decisions; return their paths
    and decisions, in order. ``on_shard(index, decisions)`` after each new shard. ``workers``
    shards at once (None: one per core, or per cluster CPU with ``address``), in local
    processes or, with ``address``, as Ray tasks on that cluster; ``engine``: what
    :func:`label_engine` chose."""
    labels.mkdir(parents=True, exist_ok=True)
    sizes = {int(p.stem.split("_")[1]): shard_size(p) for p in labels.glob("shard_*.npz")}
    student = Path(student_file).read_bytes()

    def task(i: int) -> ShardTask:
        return rules, teacher, mix, games, seed, i, engine

    def done(i: int, n: int, data: bytes) -> None:
        write_bytes_atomic(shard_path(labels, i), data)
        sizes[i] = n
        on_shard(i, n)
        fault_point("label_shard")

    # remote_pool: allfives_train.algorithms.search_distill.ray_label.RayPool (which imports this
    # module)
    if address is not None:
        if remote_pool is None:
            raise ValueError("label_all: an address needs remote_pool "
                             "(allfives_train.algorithms.search_distill.ray_label.RayPool)")
        with remote_pool(address, student, workers, labels / NODES_FILE) as pool:
            _label_parallel(sizes, target, task, done, pool)
    elif (workers or cores()) <= 1:
        i = 0
        while needed(sizes, target) is None:
            if i not in sizes:
                done(*label_shard(student, task(i)))
            i += 1
    else:
        with LocalPool(student, workers or cores()) as local:
            _label_parallel(sizes, target, task, done, local)
    m = needed(sizes, target)
    assert m is not None
    return {shard_path(labels, i): sizes[i] for i in range(m)}


#: ``labels/nodes.json``: the Ray node id each shard was labelled on (runs with ``address``)
NODES_FILE = "nodes.json"


class Pool(Protocol):
    """Where shards are labelled: ``workers`` at once; ``submit`` starts one, ``wait``
    returns the finished ones' (index, decisions, bytes) and the handles still running."""

    workers: int

    def submit(self, task: ShardTask) -> Any: ...

    def wait(self, running: set[Any]) -> tuple[list[tuple[int, int, bytes]], set[Any]]: ...

    def cancel(self, running: set[Any]) -> None: ...


class LocalPool:
    """``workers`` spawned processes on this machine (:class:`ProcessPoolExecutor`)."""

    def __init__(self, student: bytes, workers: int) -> None:
        import multiprocessing

        self.student, self.workers = student, workers
        self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=worker_init)

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:  # a stop: end the shards under way now (their work is lost
            self._end_workers()  # anyway), not later
        self.pool.shutdown(wait=exc[0] is None, cancel_futures=True)

    def _end_workers(self) -> None:
        """Terminate the workers, then close this process's end of their result pipe: a
        worker stopped in the middle of sending a shard leaves half a message there, and the
        executor's thread would wait for the rest forever (and the interpreter's exit with
        it); with no writer left it reads end-of-file and shuts down instead."""
        procs = list((self.pool._processes or {}).values())
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(2)
            if proc.is_alive():
                proc.kill()
                proc.join()
        writer = getattr(getattr(self.pool, "_result_queue", None), "_writer", None)
        if writer is not None:
            writer.close()

    def submit(self, task: ShardTask) -> Future:
        return self.pool.submit(label_shard, self.student, task)

    def wait(self, running: set[Any]) -> tuple[list[tuple[int, int, bytes]], set[Any]]:
        finished, left = wait(running, return_when=FIRST_COMPLETED)
        return [f.result() for f in finished], set(left)

    def cancel(self, running: set[Any]) -> None:
        for f in running:
            f.cancel()


def _label_parallel(sizes: dict[int, int], target: int, task: Callable[[int], ShardTask],
                    done: Callable[[int, int, bytes], None], pool: Pool) -> None:
    """Keep ``pool.workers`` shards going, the lowest missing ones, until the target is
    reached (a shard started after that is finished and kept, not used)."""
    running: set[Any] = set()
    nxt = 0
    try:
        while needed(sizes, target) is None:
            mean = sum(sizes.values()) / len(sizes) if sizes else 1.0
            have = sum(sizes.values()) + mean * len(running)
            while len(running) < pool.workers and (have < target or not running):
                while nxt in sizes:
                    nxt += 1
                running.add(pool.submit(task(nxt)))
                nxt, have = nxt + 1, have + mean
            finished, running = pool.wait(running)
            for result in finished:
                done(*result)
    except BaseException:
        pool.cancel(running)
        raise


def pad_moves(data: dict[str, np.ndarray], width: int) -> dict[str, np.ndarray]:
    """The rows with their move lists padded to ``width`` (act -1, feat and val 0)."""
    def pad(a: np.ndarray, fill: float) -> np.ndarray:
        extra = [(0, 0), (0, width - a.shape[1])] + [(0, 0)] * (a.ndim - 2)
        return np.pad(a, extra, constant_values=fill)

    return {"obs": data["obs"], "feat": pad(data["feat"], 0), "act": pad(data["act"], -1),
            "val": pad(data["val"], 0)}


def load_shards(paths: list[Path], n_features: int | None = None) -> dict[str, np.ndarray]:
    """The shards' rows concatenated, move lists padded to the widest; with ``n_features``,
    ValueError for a shard whose positions carry another number of per-action features."""
    parts = []
    for p in paths:
        try:
            with np.load(p, allow_pickle=False) as z:
                parts.append({k: z[k] for k in KEYS})
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(f"label shard {p}: not readable ({detail})") from None
        k = parts[-1]["feat"].shape[-1]
        if n_features is not None and k != n_features:
            raise ValueError(f"label shard {p} carries {k} per-action features, the student "
                             f"reads {n_features}: labels for another feature set (features) "
                             "cannot be fitted")
    width = max(p["act"].shape[1] for p in parts)
    padded = [pad_moves(p, width) for p in parts]
    return {k: np.concatenate([p[k] for p in padded]) for k in KEYS}

