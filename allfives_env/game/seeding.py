"""The one rule for seeds: ``None`` or an integer >= 0 (a Python ``int`` or a numpy integer).

Every ``reset(seed=...)`` of the project (the AEC env, the batched engine, the VectorEnvs)
applies it, so ``seed=1.5``, ``seed="7"`` or ``seed=True`` get one line instead of being
rounded, parsed or taken as 1.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

#: The largest seed a flag, a record or a request may give (every seed the project makes is
#: below it).
MAX_SEED = 2**63 - 1


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as a Python int (``None`` stays ``None``), or a ValueError naming it."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) \
            or seed < 0:
        raise ValueError(f"{name}={seed!r}: a seed must be an int >= 0 or None")
    return int(seed)


def first_seed(seed: Any) -> int | None:
    """A VectorEnv ``reset``'s seed: an int >= 0 or ``None``, or gymnasium's list of per-env
    seeds (each checked; the first is used)."""
    if isinstance(seed, (list, tuple)):
        seeds = [check_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]
        return seeds[0] if seeds else None
    return check_seed(seed)


def seed_arg(text: str) -> int:
    """``--seed``'s argparse type: an integer from 0 to :data:`MAX_SEED`, or one line saying
    so (the value cut short: a 5,000-digit seed is named by its length, never converted)."""
    digits = text.strip()
    if digits.isascii() and digits.isdigit() and len(digits) <= len(str(MAX_SEED)) \
            and int(digits) <= MAX_SEED:
        return int(digits)
    shown = text if len(text) <= 24 else f"{text[:12]}... ({len(text)} characters)"
    raise argparse.ArgumentTypeError(f"{shown!r}: a seed is an integer from 0 to 2**63 - 1")
