"""A deadline for one bot move: the searches stop at it and answer their best move so far.

A move made for a web client (``allfives serve``) or for the person at ``allfives play`` runs
inside :func:`move_deadline`; the searches (:class:`allfives_agents.planning.search.SearchAgent` and
every variant built on its world loop, OpenSpiel's ISMCTS and MCTS bots of
``openspiel:`` between simulations, and the batched ``search:net=...,batched=1``, which
then works in rounds of at most :data:`ROUND_GAMES` scratch games) call :func:`out_of_time`
between worlds (rounds) and, past the deadline or once the move is cancelled, stop and choose
among what they have searched (at least one world). Without a deadline (``simulate``, ``eval``,
training) nothing changes: the searches run their whole budget, as before.

The deadline is wall-clock time of the thread that computes the move; one thread cannot use
more CPU time than wall time, so the CPU a move costs is at most the deadline plus the last
world (round) in progress when it passed (milliseconds for ``search``'s scalar worlds, a
fraction of a second for a batched round). Bots that do not search (``random``, ``greedy``,
``heuristic``, ``ckpt:``) answer in milliseconds and never look at it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

#: The deadline of one move, unless the caller says otherwise (``allfives serve
#: --move-seconds``, ``allfives play --move-seconds``).
DEFAULT_SECONDS = 3.0
#: The most seconds a deadline may be (a flag's upper bound).
MAX_SECONDS = 600.0
#: Scratch games in one round of the batched search under a deadline.
ROUND_GAMES = 512

_local = threading.local()


class Budget:
    """A move's deadline (monotonic seconds) and its cancellation (an event another thread
    may set: the game was deleted, evicted or expired)."""

    def __init__(self, seconds: float, cancel: threading.Event | None = None) -> None:
        self.end = time.monotonic() + seconds
        self.cancel = cancel if cancel is not None else threading.Event()

    def over(self) -> bool:
        """Whether the move must stop now."""
        return self.cancel.is_set() or time.monotonic() >= self.end


@contextlib.contextmanager
def move_deadline(seconds: float | None, cancel: threading.Event | None = None
                  ) -> Iterator[Budget | None]:
    """Within the block, this thread's searches stop after ``seconds`` (None: no deadline)
    or as soon as ``cancel`` is set."""
    previous = getattr(_local, "budget", None)
    budget = Budget(seconds, cancel) if seconds is not None else None
    _local.budget = budget
    try:
        yield budget
    finally:
        _local.budget = previous


def out_of_time() -> bool:
    """Whether this thread's move is past its deadline or cancelled (False without one)."""
    budget = getattr(_local, "budget", None)
    return budget is not None and budget.over()


def has_deadline() -> bool:
    """Whether this thread's move runs under a deadline."""
    return getattr(_local, "budget", None) is not None


def check_seconds(seconds: float, flag: str = "--move-seconds") -> float:
    """``seconds`` when it is a finite number in (0, :data:`MAX_SECONDS`]; ValueError in one
    line otherwise."""
    if not isinstance(seconds, (int, float)) or not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"{flag} {seconds!r}: give a number of seconds, 0 < S <= "
                         f"{MAX_SECONDS:g}")
    return float(seconds)


class Timed:
    """An agent whose every move runs under a deadline of ``seconds`` (``allfives play``'s
    bots); every other attribute is the agent's own."""

    def __init__(self, agent: Any, seconds: float) -> None:
        self._agent, self._seconds = agent, seconds

    def act(self, obs: Any, view: Any) -> int:
        with move_deadline(self._seconds):
            return int(self._agent.act(obs, view))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)


__all__ = ["Budget", "DEFAULT_SECONDS", "MAX_SECONDS", "ROUND_GAMES", "Timed", "check_seconds",
           "has_deadline", "move_deadline", "out_of_time"]
