"""allfives_agents (the folder agents/): the first floor -- bots, search, trained models and
evaluation for All Fives, on top of ``allfives_env`` and below the trainers (train/).

The rooms (docs/architecture.md): :mod:`~allfives_agents.rulebased` (random, greedy,
heuristic, oracle), :mod:`~allfives_agents.planning` (the searches and their deadline),
:mod:`~allfives_agents.batched` (the numba twins), :mod:`~allfives_agents.features` (per-action
features), :mod:`~allfives_agents.evaluation` (``allfives eval`` and ``allfives simulate``),
:mod:`~allfives_agents.trained` (checkpoints and the shipped models) and
:mod:`~allfives_agents.web` (``allfives serve``); at the top, the agent-id registry
(:mod:`~allfives_agents.base`, :mod:`~allfives_agents.options`), the public helpers
(:mod:`~allfives_agents.public`), the levels and ``allfives play``. The old flat module paths
still import, with a DeprecationWarning naming the new path (:data:`MOVED`).

The public API is the top package's (``allfives.make_agent``, ``allfives.opponent``,
``allfives.evaluate``); here :func:`make_agent` builds an agent from its id and
:func:`opponent` plays one in a seat of an AEC env (imported on first use, so importing any
module of this package stays light).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from allfives_agents.base import Agent, available_agents, make_agent
from allfives_env import moved

#: The old flat module paths of this package -> their rooms (imported with a DeprecationWarning
#: naming the new path, :mod:`allfives_env.moved`).
MOVED: dict[str, str] = {
    "bots": "rulebased.bots", "heuristic": "rulebased.heuristic", "oracle": "rulebased.oracle",
    "opponent_model": "rulebased.opponent_model",
    "search": "planning.search", "netsearch": "planning.netsearch",
    "deadline": "planning.deadline", "slot_streams": "planning.slot_streams",
    "openspiel_agent": "planning.openspiel_agent",
    "batched_bots": "batched.bots", "batched_bot_kernels": "batched.bot_kernels",
    "batched_features": "batched.features", "batched_netsearch": "batched.netsearch",
    "batched_search": "batched.search", "simulate_batched": "batched.simulate",
    "action_features": "features.action_features", "action_views": "features.action_views",
    "feature_registry": "features.registry",
    "evaluate": "evaluation.evaluate", "report": "evaluation.report",
    "stats": "evaluation.stats", "threads": "evaluation.threads",
    "simulate": "evaluation.simulate",
    "checkpoint": "trained.checkpoint", "cardcheck": "trained.cardcheck",
    "policy_numpy": "trained.policy_numpy", "models": "trained.models",
    "save_policy": "trained.save_policy", "rllib_agent": "trained.rllib_agent",
}
moved.install(__name__, MOVED)

if TYPE_CHECKING:
    from allfives_agents.public import Opponent, opponent

__all__ = ["Agent", "Opponent", "available_agents", "make_agent", "opponent"]
_LAZY = {"Opponent", "opponent"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from allfives_agents import public

        return getattr(public, name)
    raise AttributeError(f"module 'allfives_agents' has no attribute {name!r}")
