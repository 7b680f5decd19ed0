"""Helpers for tests that start ``allfives`` in a child process."""

from __future__ import annotations

import signal


def sigint_as_in_a_terminal() -> None:
    """``preexec_fn`` of a child that must take SIGINT as Ctrl-C: the default action, even
    when the tests run in a background job, which starts with SIGINT ignored (and a child
    inherits that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
