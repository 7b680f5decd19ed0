"""``allfives_v0``: the first version of the environment, kept while it is in use (the
versioning rule, docs/environment.md); new code uses :mod:`allfives_env.allfives_v1`::

    from allfives_env import allfives_v0
    env = allfives_v0.env(players=3)        # or pettingzoo.make("aec", "allfives_v0", ...)
    env = allfives_v0.raw_env(players=3)    # the class itself (the same, checks built in)

What differs from v1, and only that: an illegal action (a legal-range action outside the
mask) raises ``ValueError`` by default (``illegal_action="raise"``), as v0 always did; v1
ends the game with -1 for the offender instead. ``illegal_action="lose"`` still works here.
Rules, rewards, observation, spaces and episode end are v1's. The version history is in
:mod:`allfives_env.env`.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from allfives_env import env as _current
from allfives_env.game.rules import Rules

ENV_NAME = "allfives_v0"


class AllFivesEnv(_current.AllFivesEnv):
    """:class:`allfives_env.env.AllFivesEnv` with v0's name and ``illegal_action="raise"``."""

    metadata = {**_current.AllFivesEnv.metadata, "name": ENV_NAME}

    def __init__(self, preset: str = "all_fives", *, rules: Rules | None = None,
                 illegal_action: str = "raise", **kwargs: Any) -> None:
        super().__init__(preset, rules=rules, illegal_action=illegal_action, **kwargs)


raw_env = AllFivesEnv


def env(preset: str = "all_fives", **kwargs: Any) -> AllFivesEnv:
    """The v0 environment (the options are :mod:`allfives_env.env`'s); the same class as
    :data:`raw_env`."""
    return AllFivesEnv(preset, **kwargs)


def parallel_env(preset: str = "all_fives", **kwargs: Any) -> ParallelEnv:
    """The v0 env as a PettingZoo ``ParallelEnv`` (:func:`allfives_env.env.parallel_env`)."""
    return turn_based_aec_to_parallel(env(preset, **kwargs))


__all__ = ["AllFivesEnv", "ENV_NAME", "env", "parallel_env", "raw_env"]
