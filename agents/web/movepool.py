"""The bounded pool of threads that compute bot moves for ``allfives serve``.

Every bot move a web client asks for runs on one of :attr:`MovePool.workers` threads (by
default one per core the server may use), under the server's move deadline
(:mod:`allfives_agents.planning.deadline`: a search stops at it and answers its best move so far)
and
with a cancellation event that is set when its game is deleted, evicted or expires. A network
(:func:`allfives_agents.web.games.network_of`) may hold at most :attr:`MovePool.per_network`
of the workers at once, so no one network can take them all. A move that finds no worker free
for it is not queued: :meth:`MovePool.submit` answers None and the request is answered 503
(step again), so no request thread waits on a bot and nothing piles up.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def usable_cores() -> int:
    """The cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class MovePool:
    """At most ``workers`` moves computed at once, at most ``per_network`` of them for one
    network; see the module docstring. ``workers=0``: one per usable core;
    ``per_network=0``: half the workers (at least 1)."""

    def __init__(self, workers: int = 0, per_network: int = 0) -> None:
        self.workers = workers if workers > 0 else usable_cores()
        self.per_network = per_network if per_network > 0 else max(1, self.workers // 2)
        self.per_network = min(self.per_network, self.workers)
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.workers, thread_name_prefix="allfives-bot")
        self._lock = threading.Lock()
        self._busy: dict[str, int] = {}
        self._running = 0

    @property
    def running(self) -> int:
        """Moves being computed now."""
        with self._lock:
            return self._running

    def submit(self, network: str, work: Callable[[], T]
               ) -> concurrent.futures.Future[T] | None:
        """``work`` on a free worker (its future), or None when every worker is busy or
        ``network`` holds its share already."""
        with self._lock:
            if self._running >= self.workers or \
                    self._busy.get(network, 0) >= self.per_network:
                return None
            self._running += 1
            self._busy[network] = self._busy.get(network, 0) + 1
        try:
            future = self._executor.submit(work)
        except RuntimeError:  # the pool was shut down
            self._release(network)
            return None
        future.add_done_callback(lambda _f: self._release(network))
        return future

    def _release(self, network: str) -> None:
        with self._lock:
            self._running -= 1
            left = self._busy.get(network, 0) - 1
            if left > 0:
                self._busy[network] = left
            else:
                self._busy.pop(network, None)

    def busy_message(self, network: str) -> str:
        """Why a move could not start now (one line)."""
        with self._lock:
            mine = self._busy.get(network, 0)
        if mine >= self.per_network:
            return (f"your network ({network}) has {mine} bot moves being computed already, "
                    f"the most one network may have at once: step again in a moment")
        return (f"all {self.workers} of the server's bot workers are busy: step again in a "
                "moment")

    def shutdown(self) -> None:
        """Stop taking moves (those running finish at their deadline)."""
        self._executor.shutdown(wait=False, cancel_futures=True)
