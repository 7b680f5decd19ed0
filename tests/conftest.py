"""Shared pytest set-up: hypothesis profiles.

``HYPOTHESIS_PROFILE=dev`` gives more examples; CI (``CI`` set) runs a derandomized profile so a
red build always reproduces.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci", deadline=None, max_examples=60, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else
                                     "default"))
