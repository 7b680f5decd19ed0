"""What a training run shows while it works: named stages, each with a total and the time left.

Every algorithm's run goes through stages (``compiling``, ``evaluating``, ``labelling``,
``fitting``, ``PPO``, ...). A :class:`Stage` shows one of them:

* on a terminal (stderr a tty, or ``--progress``): a tqdm bar on stderr with the count, the
  total, the rate and the time left;
* otherwise (a log file, a pipe, a CI job): plain lines on stdout, one when the stage starts,
  one at least every :data:`EVERY` seconds while it runs (from a timer thread, so a slow step
  never leaves the log silent for longer) and one when it ends::

      labelling: 31,250/100,000 positions (31%), 41 s so far, about 1 min 30 s left

``quiet`` shows nothing. The lines of the run itself (``run.say``) go above a bar, never
through it.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

#: seconds between two plain lines of a stage that is still running (output not a terminal)
EVERY = 30.0


def say_line(text: str, bar: Any, quiet: bool) -> None:
    """Print a line of a run: above ``bar`` (a tqdm bar) when there is one, else on stdout;
    nothing when ``quiet``."""
    if quiet:
        return
    if bar is not None:
        bar.write(text)
    else:
        print(text, flush=True)


def duration(seconds: float) -> str:
    """``seconds`` for a person: ``42 s``, ``3 min 05 s``."""
    s = max(0, int(round(seconds)))
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60:02d} s"


class Stage:
    """One stage of a run, from ``initial`` to ``total`` ``unit``s (see the module)."""

    def __init__(self, name: str, total: float, unit: str, *, initial: float = 0,
                 quiet: bool = False, bar: bool | None = None, every: float = EVERY,
                 say: Callable[[str], None] | None = None) -> None:
        """``bar``: a tqdm bar (True), plain lines (False), or as stderr is (None: a bar on a
        terminal or with ``--progress``); ``say``: where plain lines go (default: stdout)."""
        from allfives_train.shell.rundir import show_bar

        self.name, self.total, self.unit = name, float(total), unit
        self.n = self.initial = float(initial)
        self.quiet, self.every = quiet, every
        self.t0 = self.last_line = time.perf_counter()
        self.say = say or _print
        self.bar: Any = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        self.closed = False
        if quiet:
            return
        if show_bar(True, quiet) if bar is None else bar:
            from tqdm import tqdm

            self.bar = tqdm(total=_num(self.total), initial=_num(self.initial), unit=unit,
                            desc=name,
                            file=sys.stderr, dynamic_ncols=True, smoothing=0.1,
                            unit_scale=self.total >= 10_000)
        else:
            self._line(start=True)
            self._timer = threading.Thread(target=self._beat, daemon=True,
                                           name=f"progress: {name}")
            self._timer.start()

    def update_to(self, n: float) -> None:
        """The count is now ``n``."""
        with self._lock:
            self.n = float(n)
            if self.bar is not None:
                self.bar.update(_num(self.n - self.bar.n))

    def advance(self, k: float = 1) -> None:
        """``k`` more done."""
        self.update_to(self.n + k)

    def write(self, text: str) -> None:
        """A line of the run, above the bar."""
        say_line(text, self.bar, self.quiet)

    def left(self) -> float | None:
        """Seconds left at the rate so far (None before any progress)."""
        done = self.n - self.initial
        if done <= 0:
            return None
        return (self.total - self.n) * (time.perf_counter() - self.t0) / done

    def text(self) -> str:
        """The plain line: count, total, share, time so far and time left."""
        share = f" ({100 * self.n / self.total:.0f}%)" if self.total > 0 else ""
        line = (f"{self.name}: {_count(self.n)}/{_count(self.total)} {self.unit}{share}, "
                f"{duration(time.perf_counter() - self.t0)} so far")
        left = self.left()
        return line if left is None else f"{line}, about {duration(left)} left"

    def _line(self, start: bool = False) -> None:
        with self._lock:
            self.last_line = time.perf_counter()
            if start:
                self.say(f"{self.name}: {_count(self.total)} {self.unit} to go"
                         + (f" ({_count(self.initial)} already done)" if self.initial else ""))
            else:
                self.say(self.text())

    def _beat(self) -> None:
        """The timer thread: a plain line each ``every`` seconds until :meth:`close`."""
        while not self._stop.wait(max(0.05, self.every - (time.perf_counter()
                                                           - self.last_line))):
            if time.perf_counter() - self.last_line >= self.every:
                self._line()

    def close(self, note: str = "") -> float:
        """End the stage (its last line or the bar's); returns its seconds."""
        took = time.perf_counter() - self.t0
        if self.closed:
            return took
        self.closed = True
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
            self._timer = None
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        elif not self.quiet:
            self.say(f"{self.name}: done, {_count(self.n)} {self.unit} in {duration(took)}"
                     + (f"; {note}" if note else ""))
        return took

    def __enter__(self) -> Stage:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:  # stopped: no "done" line, only the bar and the timer end
            self.quiet = True
        self.close()


def _num(x: float) -> float | int:
    """``x`` as an int when it is whole (tqdm then shows 3/3, not 3.0/3.0)."""
    return int(x) if float(x).is_integer() else x


def _count(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.1f}"


def _print(text: str) -> None:
    print(text, flush=True)
