"""Bots, shipped models and evaluation for All Fives.

The public API (docs/environment.md, "Opponents, evaluation and registered ids")::

    from allfives_agents import make_agent, opponent, evaluate

:func:`make_agent` builds an agent from its id; :func:`opponent` plays one in a seat of an
AEC env; :func:`evaluate` scores a policy or an agent id as ``allfives eval`` does. The last
two are imported on first use, so importing any module of this package stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from allfives_agents.base import Agent, available_agents, make_agent

if TYPE_CHECKING:
    from allfives_agents.public import Opponent, evaluate, opponent

__all__ = ["Agent", "Opponent", "available_agents", "evaluate", "make_agent", "opponent"]
_LAZY = {"Opponent", "evaluate", "opponent"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module("allfives_agents.public"), name)
    raise AttributeError(f"module 'allfives_agents' has no attribute {name!r}")
