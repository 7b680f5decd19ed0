"""Compiling the batched engine's numba kernels once, in the background, and saying so.

The batched engine, its features and its search are numba kernels compiled on their first
call and kept in numba's on-disk cache (``cache=True``: ``__pycache__`` beside the modules, or
``NUMBA_CACHE_DIR``), so an install compiles them once (about 40 s of one core on a fresh
clone) and every later process reads them back in seconds. A run that needs them starts
:class:`Compiler` first: one spawned process calls each kernel group once (so the cache is
filled once, not by every worker at the same time) while the run goes on with work that does
not need them (its first evaluation); :meth:`Compiler.wait` then shows the ``compiling``
stage until it is done.
"""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

from allfives_env.game.rules import Rules

#: the kernel groups the labelling of ``search_distill`` calls, in order
GROUPS = ("engine", "features", "search", "labelling")


def warm(conn: Any, rules: Rules, teacher: str, student: bytes) -> None:
    """The spawned process: call every kernel group once (compiling it, or reading it from the
    cache), sending each group's name when done, then ``None``."""
    import numpy as np

    from allfives_agents.batched.bots import make_batched_bot
    from allfives_agents.batched.features import batched_features
    from allfives_env.batched_engine.games import BatchedGames
    from allfives_train.algorithms.search_distill.label import policy_from_bytes
    from allfives_train.games.workers import worker_init

    worker_init()
    try:
        policy = policy_from_bytes(student)
        k = int(policy.n_features)
        g = BatchedGames(rules, 2, 0, autoreset=False)
        g.reset()
        live = np.flatnonzero(g.in_play).astype(np.int64)
        g.observe_and_mask(live)
        acts = np.full(2, -1, np.int64)
        acts[live] = g.random_actions(live, np.arange(1, 3, dtype=np.uint64))
        g.step_unchecked(acts)
        conn.send("engine")
        live = np.flatnonzero(g.in_play).astype(np.int64)
        batched_features(g, live, k=k)
        conn.send("features")
        make_batched_bot(teacher, 0).values(g, live, keep=True)
        conn.send("search")
        from allfives_train.algorithms.search_distill.label_batched import label_games

        label_games(rules, teacher, policy, 0.5, 1, 0)
        conn.send("labelling")
    except Exception as exc:  # noqa: BLE001 (the workers then compile, and say what failed)
        conn.send(f"error: {type(exc).__name__}: {exc}")
    conn.send(None)
    conn.close()


class Compiler:
    """The warm-up process (:func:`warm`), started at once; :meth:`wait` shows the stage."""

    def __init__(self, rules: Rules, teacher: str, student: bytes) -> None:
        """``student``: the bytes of the run's ``student.npz`` (the labelling's student)."""
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=warm, args=(child, rules, teacher, student), daemon=True,
                                name="allfives compile")
        self.t0 = time.perf_counter()
        self.proc.start()
        child.close()
        self.done: list[str] = []
        self.error: str | None = None
        self.finished = False

    def poll(self) -> None:
        """Read what the process has sent so far."""
        while not self.finished and self.conn.poll():
            try:
                msg = self.conn.recv()
            except EOFError:
                self.finished = True
                break
            if msg is None:
                self.finished = True
            elif msg.startswith("error: "):
                self.error = msg[len("error: "):]
            else:
                self.done.append(msg)

    def wait(self, stage_of: Any) -> str:
        """Block until the kernels are compiled, with the ``compiling`` stage
        (``stage_of(name, total, unit, initial)`` makes it); returns a line saying how it
        went."""
        self.poll()
        if not self.finished:
            with stage_of("compiling", len(GROUPS), "kernel groups", len(self.done)) as stage:
                while not self.finished:
                    if not self.conn.poll(0.5) and not self.proc.is_alive():
                        self.finished = True  # ended without its last word (killed)
                    self.poll()
                    stage.update_to(len(self.done))
        self.proc.join(5)
        took = time.perf_counter() - self.t0
        if self.error:
            return (f"compiling: the warm-up failed ({self.error}); the workers compile on "
                    "their own")
        return (f"compiling: the batched engine, features and search ready after "
                f"{took:.0f} s (numba's cache: the next run reads them back in seconds)")

    def stop(self) -> None:
        """End the process (a stopped run)."""
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(2)
