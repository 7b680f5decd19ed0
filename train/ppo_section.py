"""PPO's own settings, declared once: the config section ``ppo:`` that the algos with a PPO
update read (``maskable_ppo``, ``ppo_batched``: named in their rows of the algorithm table,
train/algos.py) and that the RLlib backend reads too (``rllib_ppo``'s row names it)."""

from __future__ import annotations

import dataclasses

from allfives_train.sections import Section


@dataclasses.dataclass
class PPOSection:
    """PPO's clipped update: its advantages, its clip and its loss weights."""

    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO ratio clip."""
    ent_coef: float = 0.003
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value loss weight."""


#: The section's field names (in the algorithm table: the algos that read them).
FIELDS = tuple(f.name for f in dataclasses.fields(PPOSection))

PPO = Section("ppo", PPOSection, "PPO's advantages, clip and loss weights")
