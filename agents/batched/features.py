"""numba twin of :mod:`allfives_agents.features.action_features`: the per-action features of the
seat to act
in many games of a :class:`BatchedGames` at once, into a preallocated ``[n, 140, K]`` float32
array (the first K of ``FEATURES``; the plies only when K asks for them). The same numbers as
the scalar version (``tests/test_feature_registry.py`` compares every registered feature);
it reads only what that seat may see (hand, layout, tiles played, hand sizes, lacks, scores).

:func:`game_features` writes each feature of a move into its column (``C_<NAME>``, its
place in ``allfives_agents.features.action_features.REGISTRY``) where the registry says it is live:
asked for, with this many seats, for a move that empties the hand or not (:func:`live_bits`). The
columns are constants of the compiled, cached code: the registry only grows at its end, so
they never move, and a new feature edits this file (its column and its code), which tells
numba to compile it again.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from allfives_agents.batched.bot_kernels import (
    best_scores,
    expected_best,
    holding_odds,
    layout_after,
    numbers_in,
    rank_tiles,
    reply_context,
    tile_scores,
    unseen_tiles,
)
from allfives_agents.features.action_features import N_FEATURES, REGISTRY
from allfives_env.batched_engine import layout as L
from allfives_env.batched_engine.kernels import (
    ISD,
    PIPS,
    layout_points,
    legal_list,
    pips_left,
    place,
    popcount,
)

__all__ = ["N_FEATURES", "batched_features"]

# each feature's column, from the registry
C_POINTS = REGISTRY.column["points"]
C_REPLY = REGISTRY.column["reply"]
C_NO_REPLY = REGISTRY.column["no_reply"]
C_PIPS = REGISTRY.column["pips"]
C_DOUBLE = REGISTRY.column["double"]
C_VARIETY = REGISTRY.column["variety"]
C_KEEP = REGISTRY.column["keep"]
C_OUT = REGISTRY.column["out"]
C_WIN = REGISTRY.column["win"]
C_COUNTER = REGISTRY.column["counter"]
C_PLY3 = REGISTRY.column["ply3"]
C_CAN_NEXT = REGISTRY.column["can_next"]
C_OTHER_MATCH = REGISTRY.column["other_match"]
C_DRAW_REPLY = REGISTRY.column["draw_reply"]
C_OUT_PIPS = REGISTRY.column["out_pips"]
C_OPP_OUT = REGISTRY.column["opp_out"]
C_MY_MATCH = REGISTRY.column["my_match"]


@njit(cache=True)
def step_layout(ends: np.ndarray, dbl: np.ndarray, cnt: np.ndarray, state: np.ndarray,
                a: int, spin_rule: int) -> None:
    """``layout.layout_after`` in place on a layout as arrays (the engine's
    :func:`~allfives_env.batched_engine.kernels.place`, plus the spinner's bookkeeping, as the
    engine's ``apply`` does it); ``state``: [n_arms, spinner, spin_wait]."""
    t = a // 5
    end = a % 5
    before = state[0]
    state[0] = place(ends, dbl, cnt, before, state[2], state[1], a)
    if end == 0:
        if ISD[t] and spin_rule:
            state[1] = t
            state[2] = L.SPIN_LEAD
    elif state[0] == 4 and before != 4:  # the spinner's other arms opened
        state[2] = L.SPIN_NONE
    elif ISD[t] and state[1] < 0 and spin_rule:
        state[1] = t
        state[2] = end - 1


@njit(cache=True)
def replies(lay: np.ndarray, n_arms: int, tiles: int, score: np.ndarray, act: np.ndarray,
            order: np.ndarray) -> int:
    """``action_features.replies``: into ``order`` the tiles of ``tiles`` that match an
    open end of ``lay`` ([3, 4]: ends, dbl, cnt), by best score high to low then by tile; their
    score and action in ``score`` and ``act`` (by tile). Returns the count."""
    return rank_tiles(tile_scores(lay[0], lay[1], lay[2], n_arms, tiles, score, act), score, order)


@njit(cache=True)
def then_best(lay: np.ndarray, n_arms: int, mover: bool, rest: int, allowed2: int, q2: float,
              scratch: np.ndarray, best: np.ndarray) -> float:
    """``counter``'s ``then``: the mover's best from ``rest``, or the expected best."""
    if mover:
        m = best_scores(lay[0], lay[1], lay[2], n_arms, rest, scratch, best)
        return float(scratch[0]) if m else 0.0
    m = best_scores(lay[0], lay[1], lay[2], n_arms, allowed2, scratch, best)
    return expected_best(scratch, m, q2)[0]


@njit(cache=True)
def after_move(b: int, a: int, G: np.ndarray, A: np.ndarray, lay: np.ndarray,
               state: np.ndarray, spin: int) -> None:
    """Game b's layout into ``lay`` ([3, 4]: ends, dbl, cnt) and ``state`` ([n_arms,
    spinner, spin_wait]), then action ``a`` played on it."""
    for i in range(4):
        lay[0, i] = A[b, L.R_ENDS, i]
        lay[1, i] = A[b, L.R_DBL, i]
        lay[2, i] = A[b, L.R_CNT, i]
    state[0] = G[b, L.F_NARMS]
    state[1] = G[b, L.F_SPINNER]
    state[2] = G[b, L.F_SPIN_WAIT]
    step_layout(lay[0], lay[1], lay[2], state, a, spin)


@njit(cache=True)
def then(lay: np.ndarray, state: np.ndarray, deep: bool, mover: bool, rest: int, opp: int,
         q: float, allowed2: int, q2: float, spin: int, work: np.ndarray, scratch: np.ndarray,
         best: np.ndarray) -> tuple:
    """``action_features.plies``' ``then`` on layout ``lay`` (its state ``state``: [n_arms,
    spinner, spin_wait]), after the next seat's reply: ``counter``'s best of the seat after
    it (:func:`then_best`), and with ``deep`` (2 seats) the next seat's expected best after
    the mover's best-scoring follow-up from ``rest`` and whether it had one (else 0, 0);
    ``work``: [8, 28] ints of scratch (a layout and its state, the mover's replies)."""
    if not deep:
        return then_best(lay, state[0], mover, rest, allowed2, q2, scratch, best), 0.0, 0.0
    score, act, order = work[0], work[1], work[2]
    n = replies(lay, state[0], rest, score, act, order)
    if n == 0:
        m = best_scores(lay[0], lay[1], lay[2], state[0], opp, scratch, best)
        return 0.0, expected_best(scratch, m, q)[0], 0.0
    a = act[order[0]]
    mine = float(score[order[0]])
    if not rest & ~(1 << (a // 5)):
        return mine, 0.0, 1.0
    l3, st3 = work[3:6, 0:4], work[6, 0:3]
    l3[:, :] = lay[:, 0:4]
    st3[:] = state
    step_layout(l3[0], l3[1], l3[2], st3, a, spin)
    m = best_scores(l3[0], l3[1], l3[2], st3[0], opp, scratch, best)
    return mine, expected_best(scratch, m, q)[0], 1.0


@njit(cache=True)
def plies(b: int, a: int, rest: int, allowed: int, q: float, second: int, allowed2: int,
          q2: float, deeper: bool, R: np.ndarray, G: np.ndarray, A: np.ndarray,
          work: np.ndarray, scratch: np.ndarray, best: np.ndarray) -> tuple:
    """``action_features.plies`` for action ``a`` of game b's seat to act: (``counter`` in
    unsigned points, ``ply3`` in unsigned points, ``can_next``), the last two 0 unless
    ``deeper`` and 2 seats; ``work``: [18, 28] ints of scratch (two layouts and their states,
    the replies, then ``then``'s)."""
    mover = second == G[b, L.F_CUR]
    deep = deeper and mover
    l1, l2, st1, st2 = work[0:3, 0:4], work[3:6, 0:4], work[6, 0:3], work[6, 3:6]
    score, act, order = work[7], work[8], work[9]
    spin = R[L.K_SPINNER]
    after_move(b, a, G, A, l1, st1, spin)
    n = replies(l1, st1[0], allowed, score, act, order)
    c, p3, can, none = 0.0, 0.0, 0.0, 1.0
    for k in range(n):
        r = act[order[k]]
        l2[:, :] = l1
        st2[:] = st1
        step_layout(l2[0], l2[1], l2[2], st2, r, spin)
        x, y, z = then(l2, st2, deep, mover, rest, allowed & ~(1 << (r // 5)), q, allowed2, q2,
                       spin, work[10:18], scratch, best)
        c += none * q * x
        p3 += none * q * y
        can += none * q * z
        none *= 1.0 - q
    x, y, z = then(l1, st1, deep, mover, rest, allowed, q, allowed2, q2, spin, work[10:18],
                   scratch, best)
    return c + none * x, p3 + none * y, can + none * z


@njit(cache=True, inline="always")
def has(bits: int, c: int) -> bool:
    """Whether bit ``c`` of ``bits`` is set: column c is live."""
    return (bits >> c) & 1 == 1


@njit(cache=True)
def game_features(b: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
                  live: np.ndarray, out: np.ndarray, buf: np.ndarray, scratch: np.ndarray,
                  best: np.ndarray, work: np.ndarray) -> None:
    """The first K features of game b's seat to act into ``out`` ([140, K], zeroed here);
    ``live``: [2] bit masks, bit c set where column c is computed for a move that keeps
    tiles (0) or empties the hand (1) (:func:`live_bits`); ``buf``, ``scratch``, ``best``,
    ``work``: scratch ints (140, 28, 28, [18, 28])."""
    out[:, :] = 0.0
    n = legal_list(G, A, b, buf)
    if n == 0:
        return
    hand, allowed, q, sign, mine = reply_context(b, R, G, A, T)
    keep_bits, out_bits = live[0], live[1]
    deeper = has(keep_bits, C_PLY3) or has(keep_bits, C_CAN_NEXT)  # the third ply
    two_ply = has(keep_bits, C_COUNTER) or deeper
    unseen = 0  # draw_reply: the tiles the seat cannot see, when the next seat could draw
    if has(keep_bits, C_DRAW_REPLY) and G[b, L.F_BONE_END] > G[b, L.F_BONE_POS]:
        unseen = unseen_tiles(b, A, T, G[b, L.F_CUR])
    second, sign2, allowed2, q2 = -1, 1.0, 0, 0.0
    if two_ply:  # FeatureContext: the seat after the next one
        second = (G[b, L.F_CUR] + 2) % R[L.K_PLAYERS]
        allowed2, q2, sign2 = holding_odds(b, R, A, T, G[b, L.F_CUR], second)
    next_size, next_pips = 0, 0.0  # out_pips and opp_out: the next seat's size, pips
    if has(out_bits, C_OUT_PIPS) or has(keep_bits, C_OPP_OUT):
        next_size = popcount(A[b, L.R_HANDS, (G[b, L.F_CUR] + 1) % R[L.K_PLAYERS]])
        next_pips = q * pips_left(allowed)
    ends = np.empty(4, dtype=np.int64)
    dbl = np.empty(4, dtype=np.int64)
    cnt = np.empty(4, dtype=np.int64)
    for k in range(n):
        a = buf[k]
        t = a // 5
        rest = hand & ~(1 << t)
        on = keep_bits if rest else out_bits  # each column is written where it is live
        now = layout_points(G, A, b, a)
        if has(on, C_POINTS):
            out[a, C_POINTS] = now / 20.0
        if has(on, C_PIPS):
            out[a, C_PIPS] = PIPS[t] / 12.0
        if has(on, C_DOUBLE):
            out[a, C_DOUBLE] = float(ISD[t])
        if has(on, C_WIN) and R[L.K_IMMEDIATE] and mine + now >= R[L.K_TARGET]:
            out[a, C_WIN] = 1.0
        if not rest:
            if has(on, C_OUT):
                out[a, C_OUT] = 1.0
            if has(on, C_OUT_PIPS):
                out[a, C_OUT_PIPS] = next_pips / 20.0
            continue
        n_arms = layout_after(b, a, G, A, ends, dbl, cnt)
        m = answers = best_scores(ends, dbl, cnt, n_arms, allowed, scratch, best)
        exp_reply, p_none = expected_best(scratch, m, q)
        if has(on, C_REPLY):
            out[a, C_REPLY] = sign * exp_reply / 20.0
        if has(on, C_NO_REPLY):
            out[a, C_NO_REPLY] = sign * p_none
        if has(on, C_OTHER_MATCH):
            out[a, C_OTHER_MATCH] = sign * q * m / 7.0
        if unseen and p_none:  # unseen: only when draw_reply is live
            m = best_scores(ends, dbl, cnt, n_arms, unseen, scratch, best)
            if m:
                total = 0
                for i in range(m):
                    total += scratch[i]
                out[a, C_DRAW_REPLY] = sign * p_none * (total / m) / 20.0
        if has(on, C_VARIETY):
            out[a, C_VARIETY] = numbers_in(rest) / 7.0
        fits = best_scores(ends, dbl, cnt, n_arms, rest, scratch, best)
        if has(on, C_KEEP):
            out[a, C_KEEP] = (scratch[0] if fits else 0) / 20.0
        if has(on, C_MY_MATCH):
            out[a, C_MY_MATCH] = fits / 7.0
        if two_ply:
            c, p3, can = plies(b, a, rest, allowed, q, second, allowed2, q2, deeper, R, G, A,
                               work, scratch, best)
            if has(on, C_COUNTER):
                out[a, C_COUNTER] = sign2 * c / 20.0
            if has(on, C_PLY3):
                out[a, C_PLY3] = sign * p3 / 20.0
            if has(on, C_CAN_NEXT):
                out[a, C_CAN_NEXT] = can
        if has(on, C_OPP_OUT) and next_size == 1:
            out[a, C_OPP_OUT] = sign * (q * answers) * pips_left(rest) / 20.0


@njit(cache=True)
def features(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
             live: np.ndarray, out: np.ndarray) -> None:
    """``out[j]`` = the features of the seat to act in game ``idx[j]`` ([n, 140, K])."""
    buf = np.empty(140, dtype=np.int64)
    scratch = np.empty(28, dtype=np.int64)
    best = np.empty(28, dtype=np.int64)
    work = np.zeros((18, 28), dtype=np.int64)
    for j in range(idx.shape[0]):
        game_features(idx[j], R, G, A, T, live, out[j], buf, scratch, best, work)


_LIVE: dict[tuple[int, int], np.ndarray] = {}
if N_FEATURES > 63:
    raise ImportError(f"{N_FEATURES} features: live_bits packs at most 63 into an int64")


def live_bits(k: int, players: int) -> np.ndarray:
    """[2] int64: bit c set where column c of the first ``k`` is computed with ``players``
    seats (:meth:`~allfives_agents.features.registry.Registry.live`), for a move that keeps tiles
    (0)
    and for one that empties the hand (1)."""
    key = (k, players)
    if key not in _LIVE:
        _LIVE[key] = np.array([sum(1 << c for c, on in enumerate(REGISTRY.live(k, players, out))
                                   if on) for out in (False, True)], dtype=np.int64)
    return _LIVE[key]


def batched_features(games: object, idx: np.ndarray | None = None,
                     out: np.ndarray | None = None, k: int = N_FEATURES) -> np.ndarray:
    """[len(idx), 140, k] float32: the first ``k`` features of the seat to act in games
    ``idx`` (default all) of a :class:`~allfives_env.batched_engine.games.BatchedGames` (with
    ``out``, its
    last axis is k)."""
    g = games
    idx = np.arange(g.batch) if idx is None else idx  # type: ignore[attr-defined]
    idx = np.asarray(idx, dtype=np.int64)
    if out is None:
        REGISTRY.check_count(k)
        out = np.empty((len(idx), 140, k), dtype=np.float32)
    live = live_bits(out.shape[-1], g.rules.players)  # type: ignore[attr-defined]
    features(idx, g.R, g.G, g.A, g.T, live, out)  # type: ignore[attr-defined]
    return out
