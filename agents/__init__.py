"""Bots, shipped models and evaluation for All Fives.

The public API (docs/environment.md, "Opponents, evaluation and registered ids")::

    from allfives_agents import make_agent, opponent
    from allfives_agents.public import evaluate     # or allfives_env.evaluate

:func:`make_agent` builds an agent from its id; :func:`opponent` plays one in a seat of an
AEC env (imported on first use, so importing any module of this package stays light);
:func:`allfives_agents.public.evaluate` scores a policy or an agent id as ``allfives eval``
does. It is not exported here: ``allfives_agents.evaluate`` is the module of ``allfives
eval``, which would shadow it once imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from allfives_agents.base import Agent, available_agents, make_agent

if TYPE_CHECKING:
    from allfives_agents.public import Opponent, opponent

__all__ = ["Agent", "Opponent", "available_agents", "make_agent", "opponent"]
_LAZY = {"Opponent", "opponent"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from allfives_agents import public

        return getattr(public, name)
    raise AttributeError(f"module 'allfives_agents' has no attribute {name!r}")
