"""allfives: the domino game All Fives (Muggins, Five-Up) for reinforcement learning."""

from allfives_env.engine import Deal, GameState
from allfives_env.rules import PRESETS, Rules, RulesError, make_rules
from allfives_env.tiles import N_ACTIONS, action_to_str

__version__ = "0.1.0"
__all__ = [
    "Deal", "GameState", "N_ACTIONS", "PRESETS", "Rules", "RulesError", "action_to_str",
    "make_rules", "__version__",
]
