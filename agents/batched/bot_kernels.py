"""numba kernels of the batched bots (:mod:`allfives_agents.batched.bots`): greedy and the one-ply
heuristic, each deciding for a list of games of a :class:`BatchedGames` at once (uniform
random picks are the engine's own ``random_actions``).

They read only what the acting seat may see (its hand, the layout, the tiles played, hand
sizes, lacks, scores), exactly as the scalar bots read their ``SeatView``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from allfives_env.batched_engine import layout as L
from allfives_env.batched_engine.kernels import (
    HIGH,
    ISD,
    PIPS,
    SUIT,
    layout_points,
    lp,
    place,
    popcount,
    side_of,
    sorted_legal,
    trailing,
)

W_REPLY, W_BLOCK, W_PIPS, W_DOUBLE, W_VARIETY, W_KEEP = range(6)
#: heuristic's option names in the order of the kernels' weights array (the indices above).
WEIGHT_KEYS = ("reply", "block", "pips", "double", "variety", "keep")


def heuristic_weights(w: dict) -> np.ndarray:
    """``heuristic``'s options ``w`` (by name) as the weights array the kernels read."""
    return np.array([float(w[key]) for key in WEIGHT_KEYS], dtype=np.float64)


@njit(cache=True)
def greedy_actions(idx: np.ndarray, G: np.ndarray, A: np.ndarray, out: np.ndarray) -> None:
    """``GreedyAgent``: most points now; ties: heaviest tile, higher half, lowest id."""
    buf = np.empty(140, dtype=np.int64)
    for j in range(idx.shape[0]):
        b = idx[j]
        n = sorted_legal(G, A, b, buf)
        best, bp, bpips, bhigh = buf[0], -1, -1, -1
        for k in range(n):
            a = buf[k]
            t = a // 5
            p = layout_points(G, A, b, a)
            pips, high = PIPS[t], HIGH[t]
            if p > bp or (p == bp and (pips > bpips or (pips == bpips and high > bhigh))):
                best, bp, bpips, bhigh = a, p, pips, high
        out[j] = best


@njit(cache=True)
def tile_scores(ends: np.ndarray, dbl: np.ndarray, cnt: np.ndarray, n_arms: int, tiles: int,
                score: np.ndarray, act: np.ndarray) -> int:
    """The tiles of ``tiles`` that fit an open end: by tile, the most points a play of it
    scores into ``score`` and that play into ``act`` (ties to the later arm). Returns their
    mask."""
    m_all = 0
    for i in range(n_arms):
        m_all |= tiles & SUIT[ends[i]]
    m = m_all
    while m:
        score[trailing(m)] = -1
        m &= m - 1
    for i in range(n_arms):
        m = tiles & SUIT[ends[i]]
        while m:
            t = trailing(m)
            a = t * 5 + i + 1
            p = lp(ends, dbl, cnt, n_arms, a)
            if p >= score[t]:
                score[t] = p
                act[t] = a
            m &= m - 1
    return m_all


@njit(cache=True)
def rank_tiles(mask: int, score: np.ndarray, order: np.ndarray) -> int:
    """The tiles of ``mask`` into ``order`` by ``score`` (by tile) high to low, ties by tile
    ascending (a stable insertion); returns the count."""
    n = 0
    m = mask
    while m:
        t = trailing(m)
        j = n - 1
        while j >= 0 and score[order[j]] < score[t]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = t
        n += 1
        m &= m - 1
    return n


@njit(cache=True)
def best_scores(ends: np.ndarray, dbl: np.ndarray, cnt: np.ndarray, n_arms: int, tiles: int,
                out: np.ndarray, best: np.ndarray) -> int:
    """``heuristic.best_scores`` into ``out`` (28 ints), sorted from high to low; returns the
    count (``best``: 28 ints of scratch; ``out`` past the count is scratch too)."""
    n = rank_tiles(tile_scores(ends, dbl, cnt, n_arms, tiles, best, out), best, out)
    for k in range(n):
        out[k] = best[out[k]]
    return n


@njit(cache=True)
def expected_best(scores: np.ndarray, n: int, q: float) -> tuple:
    if q >= 1.0:
        if n:
            return float(scores[0]), 0.0
        return 0.0, 1.0
    exp, none = 0.0, 1.0
    for k in range(n):
        exp += scores[k] * none * q
        none *= 1.0 - q
    return exp, none


@njit(cache=True)
def numbers_in(mask: int) -> int:
    c = 0
    for k in range(7):
        if mask & SUIT[k]:
            c += 1
    return c


@njit(cache=True)
def layout_after(b: int, a: int, G: np.ndarray, A: np.ndarray, ends: np.ndarray,
                 dbl: np.ndarray, cnt: np.ndarray) -> int:
    """The layout after action ``a`` in game b into ``ends, dbl, cnt`` (their first 4
    entries; ``layout.layout_after``): game b's layout copied, then the engine's own
    :func:`~allfives_env.batched_engine.kernels.place`; returns n_arms."""
    for i in range(4):
        ends[i] = A[b, L.R_ENDS, i]
        dbl[i] = A[b, L.R_DBL, i]
        cnt[i] = A[b, L.R_CNT, i]
    return place(ends, dbl, cnt, G[b, L.F_NARMS], G[b, L.F_SPIN_WAIT], G[b, L.F_SPINNER], a)


@njit(cache=True)
def evaluate(b: int, a: int, hand: int, allowed: int, q: float, sign: float, w: np.ndarray,
             G: np.ndarray, A: np.ndarray, scratch: np.ndarray, lay: np.ndarray) -> float:
    """``heuristic.evaluate`` for game b's seat to act (hand ``hand``); ``lay``: [4, 28]
    ints of scratch (the layout after the move, and best scores per tile)."""
    t = a // 5
    now = layout_points(G, A, b, a)
    rest = hand & ~(1 << t)
    if not rest:
        return 1000.0 + now
    ends, dbl, cnt, best = lay[0], lay[1], lay[2], lay[3]
    n_arms = layout_after(b, a, G, A, ends, dbl, cnt)
    n = best_scores(ends, dbl, cnt, n_arms, allowed, scratch, best)
    exp_reply, p_none = expected_best(scratch, n, q)
    n = best_scores(ends, dbl, cnt, n_arms, rest, scratch, best)
    keep = scratch[0] if n else 0
    value = now + sign * w[W_REPLY] * exp_reply - sign * w[W_BLOCK] * p_none
    value += w[W_PIPS] * PIPS[t] + w[W_DOUBLE] * ISD[t]
    value += w[W_VARIETY] * numbers_in(rest) + w[W_KEEP] * keep
    return value


@njit(cache=True, inline="always")
def unseen_tiles(b: int, A: np.ndarray, T: np.ndarray, seat: int) -> int:
    """``SeatView.unseen`` for ``seat`` of game b: the tiles neither in its hand nor played."""
    seen = A[b, L.R_HANDS, seat]
    for t in range(28):
        if T[b, L.T_PLAYED, t] >= 0:
            seen |= 1 << t
    return ((1 << 28) - 1) & ~seen


@njit(cache=True, inline="always")
def lacks_tiles(lacks: int) -> int:
    """``heuristic.lacks_mask``: the tiles carrying a number in the 7-bit set ``lacks``."""
    m = 0
    for k in range(7):
        if lacks >> k & 1:
            m |= SUIT[k]
    return m


@njit(cache=True, inline="always")
def holding_odds(b: int, R: np.ndarray, A: np.ndarray, T: np.ndarray, seat: int, other: int
                 ) -> tuple:
    """``heuristic.holding_odds`` for ``seat`` of game b: the tiles it cannot see that seat
    ``other`` may hold (not known to lack), the chance it holds each, and +1/-1 for the own
    side or another."""
    allowed = unseen_tiles(b, A, T, seat) & ~lacks_tiles(A[b, L.R_LACKS, other])
    n_allowed = popcount(allowed)
    q = min(1.0, popcount(A[b, L.R_HANDS, other]) / n_allowed) if n_allowed else 0.0
    sign = 1.0 if side_of(R, other) == side_of(R, seat) else -1.0
    return allowed, q, sign


@njit(cache=True)
def reply_context(b: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray
                  ) -> tuple:
    """``heuristic.Context`` for game b's seat to act: its hand, the unseen tiles the next
    seat may hold (not known to lack), the chance it holds each, +1/-1 for a partner or an
    opponent, and the own side's score."""
    seat = G[b, L.F_CUR]
    allowed, q, sign = holding_odds(b, R, A, T, seat, (seat + 1) % R[L.K_PLAYERS])
    return A[b, L.R_HANDS, seat], allowed, q, sign, A[b, L.R_SCORES, side_of(R, seat)]


@njit(cache=True)
def heuristic_actions(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray,
                      T: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """``HeuristicAgent.act`` for the seat to act of every game in ``idx``."""
    buf = np.empty(140, dtype=np.int64)
    scratch = np.empty(28, dtype=np.int64)
    lay = np.zeros((4, 28), dtype=np.int64)
    for j in range(idx.shape[0]):
        b = idx[j]
        n = sorted_legal(G, A, b, buf)
        if n == 1:
            out[j] = buf[0]
            continue
        hand, allowed, q, sign, my_score = reply_context(b, R, G, A, T)
        best, best_value = buf[0], -np.inf
        for k in range(n):
            a = buf[k]
            if R[L.K_IMMEDIATE] and my_score + layout_points(G, A, b, a) >= R[L.K_TARGET]:
                best = a
                break
            value = evaluate(b, a, hand, allowed, q, sign, w, G, A, scratch, lay)
            if value > best_value + 1e-9:
                best, best_value = a, value
        out[j] = best
