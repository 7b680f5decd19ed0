"""allfives: the domino game All Fives (Muggins, Five-Up) for reinforcement learning.

``allfives_env.env`` is the module allfives_env/env.py (the PettingZoo env, ``allfives_v0``);
calling it builds the checked env: ``allfives_env.env(players=3)``. Importing this package
registers ``allfives_v0`` with PettingZoo, so ``pettingzoo.make("aec", "allfives_v0")`` works.
"""

from allfives_env import env
from allfives_env.engine import Deal, GameState
from allfives_env.env import raw_env
from allfives_env.rules import PRESETS, Rules, RulesError, make_rules
from allfives_env.tiles import N_ACTIONS, action_to_str

env.register()

__version__ = "0.1.0"
__all__ = [
    "Deal", "GameState", "N_ACTIONS", "PRESETS", "Rules", "RulesError", "action_to_str",
    "env", "make_rules", "raw_env", "__version__",
]
