"""The ``heuristic`` action view of the envs (``action_view="heuristic"``,
:mod:`allfives_env.envs.action_views`): per legal action, the terms of the hand-written
``heuristic`` evaluation, the features of ``action_features/6``
(:mod:`allfives_agents.features.action_features`; what the shipped models read), each within
[-:data:`BOUND`, :data:`BOUND`].

allfives_env imports nothing above it: it finds :data:`HEURISTIC_VIEW` through the
``allfives.action_views`` entry point (pyproject.toml), and importing this module registers it
too (the VectorEnv and the single-agent env do).
"""

from __future__ import annotations

import numpy as np

from allfives_agents.features.action_features import FEATURES, N_FEATURES, REGISTRY, action_features
from allfives_env.envs.action_views import HEURISTIC, ActionView, register_action_view
from allfives_env.game.view import SeatView


def heuristic_rows(view: SeatView, out: np.ndarray) -> None:
    """The rows of ``view``'s legal actions: every registered feature."""
    action_features(view, N_FEATURES, out=out)


def heuristic_batched(games: object, out: np.ndarray) -> None:
    """The rows of every game's seat to act (numba: :mod:`allfives_agents.batched.features`)."""
    from allfives_agents.batched.features import batched_features

    batched_features(games, out=out)


#: A bound on every column: the largest are ``out_pips`` and ``opp_out``, pips / 20 of at most
#: all 168 pips of the set (8.4); points and expected scores / 20 stay under 3, the counts / 7
#: under 4, chances and flags within 1.
BOUND = 10.0

HEURISTIC_VIEW = ActionView(
    HEURISTIC, FEATURES, tuple(f.doc for f in REGISTRY.features),
    (-BOUND,) * N_FEATURES, (BOUND,) * N_FEATURES, heuristic_rows, heuristic_batched)
register_action_view(HEURISTIC_VIEW)
