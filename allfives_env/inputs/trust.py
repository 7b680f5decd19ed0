"""Which files may run code when loaded: the trust switch behind ``--trust-checkpoint``.

The formats this project writes for sharing are data (``ckpt:`` cards and ``policy.npz``,
records, configs, label shards). Two formats it reads can carry code, because loading them
unpickles: an SB3 ``model.zip`` (cloudpickle) and an RLlib checkpoint. Those are loaded only
from the run directory a ``--resume`` continues, or when the user passes
``--trust-checkpoint`` (see docs/faults.md, "Trust model").

The switch is the environment variable :data:`TRUST_ENV`, so that it reaches the worker
processes a command starts (evaluation pools, vectorized envs, Ray's local workers). The
``allfives`` command sets it from the flag for the commands in :data:`TRUSTING` and clears it
for every other one (``serve`` among them), whatever the shell held; library code turns it on
for a block with :func:`trusting`. Nothing a network client sends turns it on.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TRUST_ENV = "ALLFIVES_TRUST_CHECKPOINT"
FLAG = "--trust-checkpoint"
#: The ``allfives`` commands that take :data:`FLAG` (never ``serve``).
TRUSTING = ("eval", "play", "simulate", "train")


def trusted() -> bool:
    """Whether code-carrying checkpoints may be loaded in this process now."""
    return os.environ.get(TRUST_ENV) == "1"


@contextmanager
def trusting(trust: bool = True) -> Iterator[None]:
    """Within the block (and in the processes started from it), load code-carrying
    checkpoints (``trust``) or refuse them (not ``trust``); the previous state after."""
    before = os.environ.get(TRUST_ENV)
    if trust:
        os.environ[TRUST_ENV] = "1"
    else:
        os.environ.pop(TRUST_ENV, None)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(TRUST_ENV, None)
        else:
            os.environ[TRUST_ENV] = before


def require_trust(subject: str, path: str | Path) -> None:
    """A one-line ``ValueError`` unless trusted: ``subject`` says what ``path`` is, e.g.
    ``"rllib:runs/x is an RLlib checkpoint"``."""
    if not trusted():
        raise ValueError(f"{subject}, which can run code when loaded (pickle): pass {FLAG} if "
                         f"you trust {path}")


def add_trust_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(FLAG, action="store_true", dest="trust_checkpoint",
                        help="load code-carrying checkpoints named on this command (rllib: "
                             "agents, an SB3 model.zip for --init-from or a --resume that is "
                             "not the run's own): unpickling them can run any code, so only "
                             "for files you trust")
