"""Where the shipped folders ``checkpoints/`` and ``configs/`` are, in a checkout and when
installed from a wheel.

In the repository they are top-level folders beside the packages. A wheel ships them as the
data-only packages ``allfives_data.checkpoints`` and ``allfives_data.configs`` (pyproject.toml
maps those package names onto the same two folders), so an installed copy finds them in
site-packages. :func:`shipped_dir` prefers the checkout's folder and falls back to the
installed one.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
SHIPPED_NAMES = ("checkpoints", "configs")


def shipped_dir(name: str) -> Path:
    """The folder ``name`` (``checkpoints`` or ``configs``): the checkout's when this module
    runs from a checkout (editable installs included), else the installed package data's.
    When neither exists, the checkout path (so messages name the expected place)."""
    if name not in SHIPPED_NAMES:
        raise ValueError(f"shipped folder {name!r}: allowed are {', '.join(SHIPPED_NAMES)}")
    checkout = _ROOT / name
    if (_ROOT / "pyproject.toml").is_file() and checkout.is_dir():
        return checkout
    try:
        spec = importlib.util.find_spec(f"allfives_data.{name}")
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if Path(location).is_dir():
            return Path(location)
    return checkout
