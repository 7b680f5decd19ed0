"""Stops: SIGINT (Ctrl-C) and SIGTERM (a scheduler's or ``kill``'s stop) while a run holds
its folder, for every algorithm alike (:class:`Stopper`, entered by the run shell,
:func:`allfives_train.shell.run.train`)."""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any


class Stopper:
    """SIGINT and SIGTERM while it is entered: each raises KeyboardInterrupt (the trainers
    then save what their last whole round left) and is noted in ``signum``; inside
    :meth:`deferred` (a plug-in's loop that finishes its round first: the RLlib backend's
    iterations) the first one is noted and said, and the round finishes; a second one raises
    at once. A signal the process ignores (SIGINT in a background job) stays ignored;
    outside the main thread nothing is installed."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signum: int | None = None
        self._defer = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Stopper:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def arm(self) -> None:
        """Install the handlers again (``ray.init`` puts its own on SIGTERM in the driver:
        it logs and aborts the process)."""
        for sig in self._previous:
            signal.signal(sig, self._handle)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.signum is None
        self.signum = signum
        if self._defer and first:
            print("allfives train: stopping after this iteration, then saving a checkpoint "
                  "(Ctrl-C again: stop at once)", file=sys.stderr, flush=True)
            return
        raise KeyboardInterrupt

    def deferred(self) -> _Deferred:
        """A block in which the first signal lets the round under way finish."""
        return _Deferred(self)


class _Deferred:
    def __init__(self, stopper: Stopper) -> None:
        self.stopper = stopper

    def __enter__(self) -> None:
        self.stopper._defer = True

    def __exit__(self, *exc: object) -> None:
        self.stopper._defer = False
