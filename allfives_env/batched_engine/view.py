"""A one-game batched state built from what one seat sees (a :class:`SeatView`).

The engine writes its own array layout here, so that the agents' Python code never names it
(only their numba kernels do, agents/batched_*.py).

A scalar agent sees a :class:`SeatView`, never a ``GameState``; to hand its decision to a
batched kernel (the batched ``search``, ``search:net=...``) it needs the batched engine's
arrays of a game in which its seat is to act and sees exactly what it sees: its hand, the
layout, the tiles played and by whom, the lacks, the hand sizes, the scores and the
boneyard's size. The tiles it cannot see (the other hands, the boneyard's order) are filled
with a placeholder, the unseen tiles in increasing order, which a search deals afresh for
every world it samples (``deal_world`` of the batched search, agents/batched/search.py) and
nothing else reads.
``tests/test_batched_view.py`` checks every field the seat can see against the real game's.
"""

from __future__ import annotations

import numpy as np

from allfives_env.batched_engine.games import BatchedGames
from allfives_env.game.view import SeatView


def games_from_view(view: SeatView) -> BatchedGames:
    """A :class:`BatchedGames` of one game in which ``view``'s seat is to act (see the
    module)."""
    g = BatchedGames(view.rules, 1, seed=0, autoreset=False)
    k, n = g.k, view.n
    G, A, T = g.G[0], g.A[0], g.T[0]
    G[:] = 0
    A[:] = 0
    for field, value in ((k.F_CUR, view.seat), (k.F_LEADER, view.leader),
                         (k.F_FORCED, view.forced_lead), (k.F_NARMS, view.n_arms),
                         (k.F_NPLAYED, view.n_played), (k.F_LEAD_TILE, view.lead_tile),
                         (k.F_SPINNER, view.spinner), (k.F_SPIN_WAIT, view.spin_wait),
                         (k.F_WINNER, -1), (k.F_HAND_IDX, view.hand_index),
                         (k.F_EXT_LEADER, -1), (k.F_HWINNER, -1), (k.F_FIN_WINNER, -1),
                         (k.F_PLAYED_M, view.played_mask),
                         (k.F_LAST_DOM, -1 if view.last_domino_seat is None
                          else view.last_domino_seat)):
        G[field] = value
    G[k.F_BONE_POS] = 28 - view.boneyard_size
    G[k.F_BONE_END] = G[k.F_BONE_POS] + view.drawable
    for row, values in ((k.R_SCORES, view.scores), (k.R_LACKS, view.lacks),
                        (k.R_ENDS, view.ends), (k.R_DBL, view.dbl), (k.R_CNT, view.cnt)):
        A[row, :len(values)] = values
    T[k.T_PLAYED] = view.played_by
    unseen = [t for t in range(28) if view.unseen >> t & 1]
    for s in range(n):
        if s == view.seat:
            A[k.R_HANDS, s] = view.hand
            continue
        size = view.hand_sizes[s]
        A[k.R_HANDS, s] = sum(1 << t for t in unseen[:size])
        unseen = unseen[size:]
    rest = [t for t in range(28) if t not in unseen]  # as many as G[F_BONE_POS]
    T[k.T_ORDER] = np.array(rest + unseen, dtype=T.dtype)  # the boneyard from F_BONE_POS on
    return g
