"""Worker processes (the warm start's collectors, search_distill's labellers, the fast
path's rollouts): how many cores there are, and how a worker starts."""

from __future__ import annotations

import os


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS says; a container's
    limit), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def worker_init() -> None:
    """Workers leave Ctrl-C to the main process (which stops them), so no worker prints a
    traceback; on Linux they die with it (a killed run leaves no worker behind); and each
    runs numpy's BLAS and torch on one thread
    (:func:`allfives_agents.evaluation.threads.one_thread`)."""
    import signal

    from allfives_agents.evaluation.threads import one_thread

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    one_thread()


def die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent ends (``PR_SET_PDEATHSIG``); a
    no-op elsewhere."""
    import ctypes
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
