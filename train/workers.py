"""Start-up of worker processes (the warm start's collectors, search_distill's labellers)."""

from __future__ import annotations


def worker_init() -> None:
    """Workers leave Ctrl-C to the main process (which stops them), so no worker prints a
    traceback; and on Linux they die with it (a killed run leaves no worker behind)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()


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
