"""Fault injection for tests: stop this process at a named point of a training run.

``ALLFIVES_FAULT=POINT[@K][:SIGNAL]`` makes the K-th passage (default 1) through
:func:`fault_point` ``POINT`` send ``SIGNAL`` (default ``KILL``; ``INT`` acts as Ctrl-C,
``TERM`` as a scheduler's stop) to this process (``INT`` goes to the whole process group when
this process leads one, as a terminal's Ctrl-C does). The points:

* ``warm_start``: between the warm start's epochs (MaskablePPO);
* ``after_eval``: an evaluation written, its checkpoint not yet (every ``algo``);
* ``snapshot_write``: half of a snapshot file written;
* ``label_shard``: a label shard written (``search_distill``);
* ``checkpoint_write``: a checkpoint's files written, not yet renamed into place (the RLlib
  backend's too);
* ``checkpoint_swap``: a checkpoint, ``best/`` or ``final/`` moved aside, its replacement not
  yet in place;
* ``rllib_iteration``: an RLlib iteration done (and its checkpoint, when one is due).

Unset (always, outside tests) it costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

ENV = "ALLFIVES_FAULT"
_passes: dict[str, int] = {}


def fault_point(name: str) -> None:
    spec = os.environ.get(ENV)
    if not spec:
        return
    point, _, sig = spec.partition(":")
    point, _, k = point.partition("@")
    if point != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] == int(k or 1):
        signum = getattr(signal, f"SIG{sig or 'KILL'}")
        if signum == signal.SIGINT and os.getpgrp() == os.getpid():
            os.killpg(os.getpgrp(), signum)  # like Ctrl-C in a terminal: the whole group
        else:
            os.kill(os.getpid(), signum)
