"""numba kernel of the batched ``search`` (:class:`allfives_agents.batched.bots.BatchedSearch`).

A port of :class:`allfives_agents.planning.search.SearchAgent` game by game over the batched
engine's state
(:mod:`allfives_env.batched_engine.kernels`): at a decision with more than one legal move, sample
``worlds = max(min_worlds, sims // moves)`` worlds that agree with what the seat to act has
seen (each other hand a uniform choice among the unseen tiles its seat is not known to lack,
the most constrained seat first, the rest of the unseen tiles in random boneyard order), play
every move in each world on a scratch copy of the game with the engine's own ``apply``, roll
out with the same fast policy (the move worth most now minus ``defend`` x the next seat's best
reply from its real hand in the world; with chance ``eps`` a random move) up to the same depth,
and score the rollout as :func:`allfives_agents.planning.search.outcome` does. The best mean wins;
ties
go to the lowest action id; a play that reaches the target under ``win_check: immediate`` is
taken at once. The arithmetic follows the scalar code step for step, so on a position whose world is
known (2 seats, nothing left to draw or kept back) both choose the same move; elsewhere they
draw their worlds from the same distribution with their own random streams. Where 50 tries
cannot deal hands that respect every known lack (the scalar agent then asks the view's exact
sampler), the last try deals the rest of the tiles without the lacks.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from allfives_agents.batched.bot_kernels import best_scores, lacks_tiles, layout_after, unseen_tiles
from allfives_env.batched_engine import layout as L
from allfives_env.batched_engine.kernels import (
    apply,
    below,
    layout_points,
    pips_left,
    popcount,
    side_of,
    sorted_legal,
    splitmix,
    uniform,
)
from allfives_env.game.tiles import DOUBLES_MASK

O_SIMS, O_MIN_WORLDS, O_EPS, O_DEFEND, O_DEPTH, O_LEAF, O_DLEAF, O_WIN = range(8)
OPTION_ORDER = ("sims", "min_worlds", "eps", "defend", "depth", "leaf", "dleaf", "win")
TRIES = 50


@njit(cache=True, inline="always")
def shuffle(pool: np.ndarray, k: int, rng: np.ndarray, b: int) -> None:
    """Shuffle ``pool[:k]`` in place (Fisher-Yates) from stream ``rng[b]``."""
    for j in range(k - 1, 0, -1):
        x = below(rng, b, j + 1)
        pool[j], pool[x] = pool[x], pool[j]


@njit(cache=True)
def deal_world(b: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
               rng: np.ndarray, W: np.ndarray, AW: np.ndarray, TW: np.ndarray,
               pool: np.ndarray) -> None:
    """Copy game b into slot 0 of ``W, AW, TW`` with the hidden tiles of the seat to act
    dealt afresh (``WorldSampler.sample``)."""
    W[0] = G[b]
    AW[0] = A[b]
    TW[0] = T[b]
    n, seat = R[L.K_PLAYERS], G[b, L.F_CUR]
    unseen = unseen_tiles(b, A, T, seat)
    k = 0
    for t in range(28):
        if unseen >> t & 1:
            pool[k] = t
            k += 1
    seats = np.empty(3, dtype=np.int64)
    keys = np.empty(3, dtype=np.int64)
    m = 0
    for s in range(n):  # the most constrained seat first (a stable sort, as sorted())
        if s == seat:
            continue
        key = popcount(unseen & ~lacks_tiles(A[b, L.R_LACKS, s])) - popcount(A[b, L.R_HANDS, s])
        j = m
        while j > 0 and keys[j - 1] > key:
            seats[j], keys[j] = seats[j - 1], keys[j - 1]
            j -= 1
        seats[j], keys[j] = s, key
        m += 1
    taken = 0
    for attempt in range(TRIES):
        taken = 0
        ok = True
        for i in range(m):
            s = seats[i]
            allowed = unseen if attempt == TRIES - 1 else unseen & ~lacks_tiles(A[b, L.R_LACKS, s])
            need = popcount(A[b, L.R_HANDS, s])
            hand = 0
            shuffle(pool, k, rng, b)  # a fresh shuffle per seat
            for j in range(k):
                bit = 1 << pool[j]
                if need and allowed & bit and not taken & bit:
                    hand |= bit
                    need -= 1
            if need:
                ok = False
                break
            AW[0, L.R_HANDS, s] = hand
            taken |= hand
        if ok:
            break
    pos = G[b, L.F_BONE_POS]
    shuffle(pool, k, rng, b)
    for j in range(k):
        if not taken >> pool[j] & 1:
            TW[0, L.T_ORDER, pos] = pool[j]  # the boneyard, from where drawing stands
            pos += 1


@njit(cache=True)
def rollout_choice(R: np.ndarray, W: np.ndarray, AW: np.ndarray, legal: np.ndarray, n: int,
                   defend: float, lay: np.ndarray, scratch: np.ndarray, b: int = 1) -> int:
    """The fast policy's move in slot ``b`` (``search._defensive_choice``, or the most points
    now when ``defend`` is 0)."""
    seat = W[b, L.F_CUR]
    if defend == 0.0:
        action, best = legal[0], -1
        for k in range(n):
            p = layout_points(W, AW, b, legal[k])
            if p > best:
                action, best = legal[k], p
        return action
    nxt = seat + 1 if seat + 1 < R[L.K_PLAYERS] else 0
    sign = defend if side_of(R, nxt) == side_of(R, seat) else -defend
    hand, opp = AW[b, L.R_HANDS, seat], AW[b, L.R_HANDS, nxt]
    action, best_v = legal[0], -1e9
    for k in range(n):
        a = legal[k]
        if hand == 1 << (a // 5):
            return a  # going out
        n_arms = layout_after(b, a, W, AW, lay[0], lay[1], lay[2])
        c = best_scores(lay[0], lay[1], lay[2], n_arms, opp, scratch, lay[3])
        reply = scratch[0] if c else 0
        v = layout_points(W, AW, b, a) + sign * reply
        if v > best_v:
            action, best_v = a, v
    return action


@njit(cache=True)
def roll_out(R: np.ndarray, W: np.ndarray, AW: np.ndarray, TW: np.ndarray, seat: int,
             depth: int, eps: float, defend: float, stream: np.ndarray, EV: np.ndarray,
             EVP: np.ndarray, legal: np.ndarray, lay: np.ndarray, scratch: np.ndarray) -> None:
    """``search.rollout`` on slot 1: play on to the end of the hand, or until ``seat`` is
    about to play for the ``depth + 1``-th time."""
    turns = 0
    while not W[1, L.F_HAND_OVER]:
        current = W[1, L.F_CUR]
        if depth and current == seat:
            turns += 1
            if turns > depth:
                return
        n = sorted_legal(W, AW, 1, legal)
        if n == 1:
            action = legal[0]
        elif eps and uniform(stream, 0) < eps:
            action = legal[int(uniform(stream, 0) * n)]
        else:
            action = rollout_choice(R, W, AW, legal, n, defend, lay, scratch)
        apply(1, action, R, W, AW, TW, EV, EVP, EV, EVP)


@njit(cache=True)
def outcome(R: np.ndarray, W: np.ndarray, AW: np.ndarray, side: int, before: np.ndarray,
            win: float, leaf: float, dleaf: float, b: int = 1) -> float:
    """``search.outcome`` of slot ``b``."""
    sides = R[L.K_SIDES]
    gains = np.zeros(sides, dtype=np.float64)
    for i in range(sides):
        gains[i] = AW[b, L.R_SCORES, i] - before[i]
    bonus = 0.0
    if W[b, L.F_GAME_OVER] and W[b, L.F_WINNER] >= 0:
        bonus = win if W[b, L.F_WINNER] == side else -win
    elif not W[b, L.F_HAND_OVER] and (leaf or dleaf):
        held = np.zeros(sides, dtype=np.float64)
        for s in range(R[L.K_PLAYERS]):
            hand = AW[b, L.R_HANDS, s]
            held[side_of(R, s)] += leaf * pips_left(hand) + dleaf * popcount(hand & DOUBLES_MASK)
        for i in range(sides):
            gains[i] = gains[i] - held[i]
    other = -np.inf
    for i in range(sides):
        if i != side and gains[i] > other:
            other = gains[i]
    return gains[side] - other + bonus


@njit(cache=True)
def winning_play(b: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, moves: np.ndarray,
                 n: int, side: int) -> int:
    """The first of ``moves[:n]`` that reaches the target now under ``win_check:
    immediate``, else -1."""
    if R[L.K_IMMEDIATE]:
        for k in range(n):
            if A[b, L.R_SCORES, side] + layout_points(G, A, b, moves[k]) >= R[L.K_TARGET]:
                return moves[k]
    return -1


@njit(cache=True)
def search_actions(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray,
                   T: np.ndarray, rng: np.ndarray, opts: np.ndarray, out: np.ndarray) -> None:
    """``SearchAgent.act`` for the seat to act of every game in ``idx``; ``rng[b]`` is game
    slot b's splitmix64 stream."""
    search_values(idx, R, G, A, T, rng, opts, out, np.empty((0, 140), dtype=np.float64))


@njit(cache=True)
def search_values(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray,
                  T: np.ndarray, rng: np.ndarray, opts: np.ndarray, out: np.ndarray,
                  values: np.ndarray) -> None:
    """:func:`search_actions`, and when ``values`` has a row per game of ``idx``
    (``[len(idx), 140]``): each searched move's mean rollout outcome in points
    (``SearchAgent.rollout_means``) at its action id in row j. A row is left as it was where
    the move needs no search (one legal move, or a play that wins now)."""
    keep = values.shape[0] > 0
    sims, min_worlds, depth = int(opts[O_SIMS]), int(opts[O_MIN_WORLDS]), int(opts[O_DEPTH])
    eps, defend, win = opts[O_EPS], opts[O_DEFEND], opts[O_WIN]
    leaf, dleaf = opts[O_LEAF], opts[O_DLEAF]
    W = np.zeros((2, G.shape[1]), dtype=G.dtype)
    AW = np.zeros((2, A.shape[1], A.shape[2]), dtype=A.dtype)
    TW = np.zeros((2, T.shape[1], T.shape[2]), dtype=T.dtype)
    EV = np.zeros((1, 1, 4), dtype=np.int16)
    EVP = np.zeros((1, 1), dtype=np.int16)
    Rw = R.copy()
    Rw[L.K_LOG] = 0  # rollouts keep no record
    moves = np.empty(140, dtype=np.int64)
    legal = np.empty(140, dtype=np.int64)
    totals = np.empty(140, dtype=np.float64)
    pool = np.empty(28, dtype=np.int64)
    scratch = np.empty(28, dtype=np.int64)
    lay = np.zeros((4, 28), dtype=np.int64)
    before = np.zeros(4, dtype=np.float64)
    stream = np.zeros(1, dtype=np.uint64)
    for j in range(idx.shape[0]):
        b = idx[j]
        n = sorted_legal(G, A, b, moves)
        out[j] = moves[0]
        if n == 1:
            continue
        seat = G[b, L.F_CUR]
        side = side_of(R, seat)
        found = winning_play(b, R, G, A, moves, n, side)
        if found >= 0:
            out[j] = found
            continue
        for i in range(4):
            before[i] = A[b, L.R_SCORES, i]
        worlds = max(min_worlds, sims // n)
        totals[:n] = 0.0
        for _ in range(worlds):
            deal_world(b, Rw, G, A, T, rng, W, AW, TW, pool)
            seed = splitmix(rng, b)
            for k in range(n):
                W[1] = W[0]
                AW[1] = AW[0]
                TW[1] = TW[0]
                stream[0] = seed
                apply(1, moves[k], Rw, W, AW, TW, EV, EVP, EV, EVP)
                roll_out(Rw, W, AW, TW, seat, depth, eps, defend, stream, EV, EVP, legal, lay,
                         scratch)
                totals[k] += outcome(Rw, W, AW, side, before, win, leaf, dleaf)
        best = 0
        for k in range(1, n):
            if totals[k] > totals[best]:
                best = k
        out[j] = moves[best]
        if keep:
            for k in range(n):
                values[j, moves[k]] = totals[k] / worlds
