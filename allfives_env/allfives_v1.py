"""``allfives_v1``: the current environment, as a versioned module like PettingZoo's
``from pettingzoo.classic import connect_four_v3``::

    from allfives_env import allfives_v1
    env = allfives_v1.env(players=3)        # the checked env (what allfives_env.env builds)
    env = allfives_v1.raw_env(players=3)    # the class itself (the same, checks built in)
    env = allfives_v1.parallel_env(players=3)   # a PettingZoo ParallelEnv (one seat acts)

v1 differs from v0 (:mod:`allfives_env.allfives_v0`, kept) in one thing: an illegal action
ends the game with -1 for the offender and a warning by default (``illegal_action="lose"``).
Versioning rule (docs/environment.md): any change of behaviour (rewards, illegal moves, the
observation, spaces, episode end) makes a new module ``allfives_v2``. The version history is
in :mod:`allfives_env.env`.
"""

from __future__ import annotations

from allfives_env.env import ENV_NAME, AllFivesEnv, env, parallel_env, raw_env

__all__ = ["AllFivesEnv", "ENV_NAME", "env", "parallel_env", "raw_env"]
