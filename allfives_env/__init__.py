"""allfives: the domino game All Fives (Muggins, Five-Up) for reinforcement learning.

``allfives_env.env`` is the module allfives_env/env.py (the PettingZoo env, ``allfives_v0``);
calling it builds the checked env: ``allfives_env.env(players=3)``. Importing this package
registers ``allfives_v0`` with PettingZoo, so ``pettingzoo.make("aec", "allfives_v0")`` works,
and the Gymnasium id ``allfives/AllFives-v0`` (:mod:`allfives_env.gym_ids`).
``allfives_env.allfives_v0`` is the versioned module (``env``, ``raw_env``).

``opponent``, ``evaluate`` and ``make_agent`` are :mod:`allfives_agents`'s, re-exported here by
name on first use (imported with importlib, as the CLI dispatches subcommands, so this layer
imports nothing above it): one namespace for the public API, docs/environment.md.
"""

import importlib
from typing import Any

from allfives_env import allfives_v0, env, gym_ids
from allfives_env.engine import Deal, GameState
from allfives_env.env import raw_env
from allfives_env.rules import PRESETS, Rules, RulesError, make_rules
from allfives_env.tiles import N_ACTIONS, action_to_str

env.register()
gym_ids.register()

__version__ = "0.1.0"
__all__ = [
    "Deal", "GameState", "N_ACTIONS", "PRESETS", "Rules", "RulesError", "action_to_str",
    "allfives_v0", "env", "evaluate", "make_agent", "make_rules", "opponent", "raw_env",
    "__version__",
]
_AGENTS_API = ("evaluate", "make_agent", "opponent")  # allfives_agents's, on first use


def __getattr__(name: str) -> Any:
    if name in _AGENTS_API:
        return getattr(importlib.import_module("allfives_agents"), name)
    raise AttributeError(f"module 'allfives_env' has no attribute {name!r}")
