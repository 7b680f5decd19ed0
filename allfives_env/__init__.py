"""allfives: the domino game All Fives (Muggins, Five-Up) for reinforcement learning.

``allfives_env.env`` is the module allfives_env/env.py (the PettingZoo env, ``allfives_v1``);
calling it builds the checked env: ``allfives_env.env(players=3)``. Importing this package
registers ``allfives_v1`` and ``allfives_v0`` with PettingZoo, so
``pettingzoo.make("aec", "allfives_v1")`` works, and the Gymnasium id ``allfives/AllFives-v0``
(:mod:`allfives_env.gym_ids`). ``allfives_env.allfives_v1`` is the versioned module (``env``,
``raw_env``); ``allfives_env.allfives_v0`` keeps v0 (illegal actions raise by default).

``opponent``, ``evaluate``, ``make_agent`` and ``save_policy`` (any policy as a checkpoint
``ckpt:DIR`` plays) are :mod:`allfives_agents`'s, re-exported here by
name on first use (imported with importlib, as the CLI dispatches subcommands, so this layer
imports nothing above it): one namespace for the public API, docs/environment.md.
"""

import importlib
from typing import Any

from allfives_env import allfives_v0, allfives_v1, env, gym_ids
from allfives_env.action_views import ACTION_VIEWS, action_view_features, action_view_names
from allfives_env.engine import Deal, GameState
from allfives_env.env import parallel_env, raw_env
from allfives_env.observation import OBS_SIZE
from allfives_env.rules import PRESETS, Rules, RulesError, make_rules
from allfives_env.tiles import N_ACTIONS, action_to_str

env.register()
gym_ids.register()

__version__ = "0.1.0"
__all__ = [
    "ACTION_VIEWS", "OBS_SIZE", "action_view_features", "action_view_names",
    "Deal", "GameState", "N_ACTIONS", "PRESETS", "Rules", "RulesError", "action_to_str",
    "allfives_v0", "allfives_v1", "env", "evaluate", "make_agent", "make_rules", "opponent",
    "parallel_env", "raw_env", "save_policy", "__version__",
]
#: The public API of allfives_agents re-exported here, as ``module:attribute`` data loaded on
#: first use (a registry, as the CLI's subcommands: this layer imports nothing above it).
AGENTS_API = {name: f"allfives_agents.public:{name}" for name in ("evaluate", "opponent")} | {
    "make_agent": "allfives_agents.base:make_agent",
    "save_policy": "allfives_agents.save_policy:save_policy"}


def __getattr__(name: str) -> Any:
    target = AGENTS_API.get(name)
    if target is None:
        raise AttributeError(f"module 'allfives_env' has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)
