"""Durations given on the command line (``--seconds``, ``--minutes``, ``--every``): finite,
positive and at most :data:`MAX_SECONDS`, or one ``ValueError`` line naming the flag."""

from __future__ import annotations

import math

#: The longest duration any flag accepts, in seconds: about 31 years (``inf``, ``nan`` and
#: larger values are refused, so no command runs for ever on one).
MAX_SECONDS = 1e9


def check_duration(value: float, flag: str, unit: str = "seconds") -> float:
    """``value`` (in ``unit``: ``"seconds"`` or ``"minutes"``) when it is a finite positive
    number of at most :data:`MAX_SECONDS`; else a one-line ``ValueError`` naming ``flag``."""
    per = 60.0 if unit == "minutes" else 1.0
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS / per):
        raise ValueError(f"{flag} {value}: must be a finite positive number of {unit}, at "
                         f"most {MAX_SECONDS / per:g}")
    return value
