"""numba twin of :mod:`agents.action_features`: the per-action features of the seat to act
in many games of a :class:`BatchedGames` at once, into a preallocated ``[n, 140, K]`` float32
array. The same numbers as the scalar version (the tests compare them exactly); it reads only
what that seat may see (hand, layout, tiles played, hand sizes, lacks, scores).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.batched_bot_kernels import (
    best_scores,
    expected_best,
    layout_after,
    numbers_in,
    reply_context,
)
from allfives_env.batched_kernels import (
    ISD,
    K_IMMEDIATE,
    K_TARGET,
    PIPS,
    layout_points,
    legal_list,
)

N_FEATURES = 9


@njit(cache=True)
def game_features(b: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
                  out: np.ndarray, buf: np.ndarray, scratch: np.ndarray, best: np.ndarray
                  ) -> None:
    """The features of game b's seat to act into ``out`` ([140, K], zeroed here);
    ``buf``, ``scratch``, ``best``: scratch ints (140, 28, 28)."""
    out[:, :] = 0.0
    n = legal_list(G, A, b, buf)
    if n == 0:
        return
    hand, allowed, q, sign, mine = reply_context(b, R, G, A, T)
    ends = np.empty(4, dtype=np.int64)
    dbl = np.empty(4, dtype=np.int64)
    cnt = np.empty(4, dtype=np.int64)
    best = np.empty(28, dtype=np.int64)  # scratch of best_scores
    for k in range(n):
        a = buf[k]
        t = a // 5
        now = layout_points(G, A, b, a)
        out[a, 0] = now / 20.0
        out[a, 3] = PIPS[t] / 12.0
        out[a, 4] = float(ISD[t])
        if R[K_IMMEDIATE] and mine + now >= R[K_TARGET]:
            out[a, 8] = 1.0
        rest = hand & ~(1 << t)
        if not rest:
            out[a, 7] = 1.0
            continue
        n_arms = layout_after(b, a, G, A, ends, dbl, cnt)
        m = best_scores(ends, dbl, cnt, n_arms, allowed, scratch, best)
        exp_reply, p_none = expected_best(scratch, m, q)
        out[a, 1] = sign * exp_reply / 20.0
        out[a, 2] = sign * p_none
        out[a, 5] = numbers_in(rest) / 7.0
        m = best_scores(ends, dbl, cnt, n_arms, rest, scratch, best)
        out[a, 6] = (scratch[0] if m else 0) / 20.0


@njit(cache=True)
def features(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
             out: np.ndarray) -> None:
    """``out[j]`` = the features of the seat to act in game ``idx[j]`` ([n, 140, K])."""
    buf = np.empty(140, dtype=np.int64)
    scratch = np.empty(28, dtype=np.int64)
    best = np.empty(28, dtype=np.int64)
    for j in range(idx.shape[0]):
        game_features(idx[j], R, G, A, T, out[j], buf, scratch, best)


def batched_features(games: object, idx: np.ndarray | None = None,
                     out: np.ndarray | None = None) -> np.ndarray:
    """[len(idx), 140, K] float32 features of the seat to act in games ``idx`` (default all)
    of a :class:`~allfives_env.batched.BatchedGames`."""
    g = games
    idx = np.arange(g.batch) if idx is None else idx  # type: ignore[attr-defined]
    idx = np.asarray(idx, dtype=np.int64)
    if out is None:
        out = np.empty((len(idx), 140, N_FEATURES), dtype=np.float32)
    features(idx, g.R, g.G, g.A, g.T, out)  # type: ignore[attr-defined]
    return out
