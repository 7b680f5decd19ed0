"""numba twin of :func:`allfives_env.envs.action_views.facts_rows`: the ``facts`` action view of the
seat to act in many games of a :class:`~allfives_env.batched_engine.games.BatchedGames` at once,
into a
``[B, 140, len(FACT_NAMES)]`` float32 array (zero rows for actions that are not legal, all zero for
a game with no hand in play). It reads only what that seat may see: its hand, the layout, the
tiles played, the next seat's lacks, its side's score. ``tests/test_action_views.py`` checks
it equals the scalar rows. Importing this module needs numba.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from allfives_env.batched_engine.kernels import (
    HIGH,
    ISD,
    LOW,
    OTHER,
    PIPS,
    SUIT,
    arms_total,
    legal_list,
    lp,
    pips_left,
    place,
    popcount,
    side_of,
)
from allfives_env.batched_engine.layout import (
    F_CUR,
    F_HAND_OVER,
    F_NARMS,
    F_PLAYED_M,
    F_SPIN_WAIT,
    F_SPINNER,
    K_IMMEDIATE,
    K_PLAYERS,
    K_SPINNER,
    K_TARGET,
    R_CNT,
    R_DBL,
    R_ENDS,
    R_HANDS,
    R_LACKS,
    R_SCORES,
)
from allfives_env.envs.action_views import FACT_COLUMN, FACT_NAMES

N_FACTS = len(FACT_NAMES)
C_LOW, C_HIGH, C_PIPS, C_DOUBLE = (FACT_COLUMN[k] for k in ("low", "high", "pips", "double"))
C_END, C_EXPOSED = FACT_COLUMN["end_lead"], FACT_COLUMN["exposed_0"]
C_POINTS, C_TOTAL = FACT_COLUMN["points"], FACT_COLUMN["open_total"]
C_SPINNER, C_OPENS, C_OUT, C_WIN = (FACT_COLUMN[k] for k in
                                    ("spinner", "opens_arms", "out", "win"))
C_OPEN_AFTER, C_HELD, C_UNSEEN = (FACT_COLUMN[k] for k in
                                  ("open_after_0", "held_after_0", "unseen_0"))
C_REST_TILES, C_REST_PIPS, C_HELD_FIT, C_UNSEEN_FIT, C_NEXT_LACKS = (
    FACT_COLUMN[k] for k in ("rest_tiles", "rest_pips", "held_fit", "unseen_fit",
                             "next_lacks_open"))
C_MOD5, C_REPLY = FACT_COLUMN["total_mod5_0"], FACT_COLUMN["reply_scores_0"]
C_HELD_SCORING, C_UNSEEN_SCORING = FACT_COLUMN["held_scoring"], FACT_COLUMN["unseen_scoring"]


@njit(cache=True)
def facts_kernel(R: np.ndarray, G: np.ndarray, A: np.ndarray, out: np.ndarray) -> None:
    """``out[b]``: the ``facts`` rows of game b's seat to act (zeros where it has none)."""
    buf = np.empty(140, dtype=np.int64)
    ends: Any = np.empty(4, dtype=np.int64)  # the layout after a move, per move
    dbl: Any = np.empty(4, dtype=np.int64)
    cnt: Any = np.empty(4, dtype=np.int64)
    n = R[K_PLAYERS]
    for b in range(G.shape[0]):
        out[b] = 0.0
        if G[b, F_HAND_OVER]:
            continue
        n_legal = legal_list(G, A, b, buf)
        seat = G[b, F_CUR]
        hand = A[b, R_HANDS, seat]
        unseen = ((1 << 28) - 1) & ~(hand | G[b, F_PLAYED_M])
        nxt = seat + 1 if seat + 1 < n else 0
        lacks_next = A[b, R_LACKS, nxt]
        mine = A[b, R_SCORES, side_of(R, seat)]
        narms = G[b, F_NARMS]
        for j in range(n_legal):
            a = buf[j]
            t = a // 5
            end = a % 5
            row = out[b, a]
            row[C_LOW] = LOW[t] / 6.0
            row[C_HIGH] = HIGH[t] / 6.0
            row[C_PIPS] = PIPS[t] / 12.0
            row[C_DOUBLE] = 1.0 if ISD[t] else 0.0
            row[C_END + end] = 1.0
            for i in range(4):
                ends[i] = A[b, R_ENDS, i]
                dbl[i] = A[b, R_DBL, i]
                cnt[i] = A[b, R_CNT, i]
            if end == 0:
                row[C_EXPOSED + LOW[t]] = 1.0
                row[C_EXPOSED + HIGH[t]] = 1.0
            else:
                row[C_EXPOSED + OTHER[t * 7 + ends[end - 1]]] = 1.0
            arms = place(ends, dbl, cnt, narms, G[b, F_SPIN_WAIT], G[b, F_SPINNER], a)
            total = PIPS[t] if end == 0 else arms_total(ends, dbl, cnt, arms)
            points = total if total > 0 and total % 5 == 0 else 0
            row[C_POINTS] = points / 20.0
            row[C_TOTAL] = total / 60.0
            if ISD[t] and R[K_SPINNER] and G[b, F_SPINNER] < 0:
                row[C_SPINNER] = 1.0
            if narms < 4 and arms == 4:
                row[C_OPENS] = 1.0
            rest = hand & ~(1 << t)
            if rest == 0:
                row[C_OUT] = 1.0
            if R[K_IMMEDIATE] and mine + points >= R[K_TARGET]:
                row[C_WIN] = 1.0
            fit = 0
            lacked = 0
            for i in range(arms):
                e = ends[i]
                row[C_OPEN_AFTER + e] += 0.25
                fit |= SUIT[e]
                lacked += (lacks_next >> e) & 1
            for k in range(7):
                row[C_HELD + k] = popcount(rest & SUIT[k]) / 7.0
                row[C_UNSEEN + k] = popcount(unseen & SUIT[k]) / 7.0
            row[C_REST_TILES] = popcount(rest) / 10.0
            row[C_REST_PIPS] = pips_left(rest) / 60.0
            row[C_HELD_FIT] = popcount(rest & fit) / 7.0
            row[C_UNSEEN_FIT] = popcount(unseen & fit) / 28.0
            row[C_NEXT_LACKS] = lacked / 4.0
            row[C_MOD5 + total % 5] = 1.0
            scoring = 0
            for i in range(arms):
                e = ends[i]
                for t2 in range(28):
                    if (SUIT[e] >> t2) & 1 and lp(ends, dbl, cnt, arms, t2 * 5 + i + 1) > 0:
                        scoring |= 1 << t2
                        row[C_REPLY + OTHER[t2 * 7 + e]] = 1.0
            row[C_HELD_SCORING] = popcount(rest & scoring) / 7.0
            row[C_UNSEEN_SCORING] = popcount(unseen & scoring) / 7.0


def batched_facts(games: Any, out: np.ndarray) -> None:
    """The ``facts`` rows of every game's seat to act into ``out`` ``[B, 140, N_FACTS]``."""
    facts_kernel(games.R, games.G, games.A, out)
