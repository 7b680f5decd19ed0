"""allfives_env: the ground floor of allfives -- the game All Fives (Muggins, Five-Up) and its
environments, with no agent and no trainer in it.

``allfives_env.env`` is the module allfives_env/env.py (the PettingZoo env, ``allfives_v1``);
calling it builds the checked env: ``allfives_env.env(players=3)``. Importing this package
registers ``allfives_v1`` and ``allfives_v0`` with PettingZoo, so
``pettingzoo.make("aec", "allfives_v1")`` works, and the Gymnasium ids that installed packages
declare (:mod:`allfives_env.envs.gym_ids`: ``allfives/AllFives-v0``). ``allfives_env.allfives_v1``
is the versioned module (``env``, ``raw_env``); ``allfives_env.allfives_v0`` keeps v0 (illegal
actions raise by default).

The rooms (docs/architecture.md): :mod:`~allfives_env.game` (tiles, rules, engine, what a seat
sees, the observation, the one game loop), :mod:`~allfives_env.envs` (action views, adapters,
Gymnasium ids), :mod:`~allfives_env.batched_engine`, :mod:`~allfives_env.records`,
:mod:`~allfives_env.spiel` (OpenSpiel), :mod:`~allfives_env.rendering`,
:mod:`~allfives_env.inputs` (safe loaders, trust, paths) and :mod:`~allfives_env.benchmarks`.
The old flat module paths still import, with a DeprecationWarning naming the new path
(:mod:`allfives_env.moved`).

The public API of the whole project (``env``, ``opponent``, ``evaluate``, ``make_agent``,
``save_policy``, ...) is the top package ``allfives``. The names of the floors above this one
that ``allfives_env`` once exported (``allfives_env.opponent``, ...) still work, with a
DeprecationWarning naming their place in ``allfives``: they are found through the
``allfives.api`` entry points that pyproject.toml declares, so this package imports nothing
above it.
"""

import warnings
from importlib.metadata import entry_points
from typing import Any

from allfives_env import allfives_v0, allfives_v1, env, moved
from allfives_env.env import parallel_env, raw_env
from allfives_env.envs import gym_ids
from allfives_env.envs.action_views import ACTION_VIEWS, action_view_features, action_view_names
from allfives_env.game.engine import Deal, GameState
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.rules import PRESETS, Rules, RulesError, make_rules
from allfives_env.game.tiles import N_ACTIONS, action_to_str

moved.install(__name__, moved.MOVED)
env.register()
gym_ids.register()

__version__ = "0.1.0"
__all__ = [
    "ACTION_VIEWS", "OBS_SIZE", "action_view_features", "action_view_names",
    "Deal", "GameState", "N_ACTIONS", "PRESETS", "Rules", "RulesError", "action_to_str",
    "allfives_v0", "allfives_v1", "env", "make_rules", "parallel_env", "raw_env", "__version__",
]
#: The entry-point group through which the top package provides the names this package once
#: exported (``allfives_env.opponent`` -> ``allfives.opponent``, pyproject.toml).
API_ENTRY_POINTS = "allfives.api"


def __getattr__(name: str) -> Any:
    found = [ep for ep in entry_points(group=API_ENTRY_POINTS) if ep.name == name]
    if not found:
        raise AttributeError(f"module 'allfives_env' has no attribute {name!r}")
    new = found[0].value.replace(":", ".")
    warnings.warn(f"allfives_env.{name} moved to {new}; use {new}", DeprecationWarning,
                  stacklevel=2)
    return found[0].load()
