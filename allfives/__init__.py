"""allfives: the domino game All Fives (Muggins, Five-Up) for reinforcement learning.

The top floor: the public API of the whole project and the ``allfives`` command line
(:mod:`allfives.cli`). It imports down from the three floors below it, and none of them imports
it: ``allfives_env`` (the game and its environments) <- ``allfives_agents`` (bots, search,
trained models, evaluation) <- ``allfives_train`` (training) <- ``allfives``
(docs/architecture.md).

::

    import allfives

    env = allfives.env(players=3)                        # the PettingZoo AEC env (allfives_v1)
    bot = allfives.opponent("ckpt:best", env)            # an agent id playing a seat
    result = allfives.evaluate(my_policy, against=["heuristic"], games=200, seed=0)
    allfives.save_policy(net, "runs/mine")               # plays as ckpt:runs/mine

``env`` is the module ``allfives_env.env``, callable: ``allfives.env(players=3)`` builds the
checked env; ``raw_env`` is its class and ``parallel_env`` its parallel form. Importing this
package imports ``allfives_env``, which registers ``allfives_v1`` with PettingZoo and the
Gymnasium id ``allfives/AllFives-v0``. Spaces, rewards, options and examples:
docs/environment.md; every name: docs/api.md.
"""

from __future__ import annotations

from allfives_agents.base import available_agents, make_agent
from allfives_agents.public import Opponent, evaluate, opponent
from allfives_agents.trained.save_policy import save_policy
from allfives_env import __version__, allfives_v0, allfives_v1, env
from allfives_env.env import parallel_env, raw_env
from allfives_env.envs.action_views import ACTION_VIEWS, action_view_features, action_view_names
from allfives_env.game.engine import Deal, GameState
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.rules import PRESETS, Rules, RulesError, make_rules
from allfives_env.game.tiles import N_ACTIONS, action_to_str

__all__ = [
    "ACTION_VIEWS", "Deal", "GameState", "N_ACTIONS", "OBS_SIZE", "Opponent", "PRESETS", "Rules",
    "RulesError", "__version__", "action_to_str", "action_view_features", "action_view_names",
    "allfives_v0", "allfives_v1", "available_agents", "env", "evaluate", "make_agent",
    "make_rules", "opponent", "parallel_env", "raw_env", "save_policy",
]
