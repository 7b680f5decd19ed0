"""numba kernels of the batched engine (:mod:`allfives_env.batched_engine.games`): B games, one
loop.

A port of :class:`allfives_env.game.engine.GameState` and
:func:`allfives_env.game.observation.observe`
game by game over structure-of-arrays state. Importing this module needs numba; the public
class imports it lazily and says how to install it when it is missing.

State: ``G``, ``A``, ``T`` and ``R`` as :mod:`allfives_env.batched_engine.layout` lays them out
(its docstring says what each field holds and which a seat may read); besides them
``rng[b]`` (uint64): the game's own splitmix64 stream; ``master[0]``: the stream that seeds
each new game; ``EV[b, j, 4]`` (int16, ``(kind, seat, tile, end)`` plus ``EVP[b, j]``
points): this hand's events when logging, and ``DEV``/``DEVP`` the finished hand's copy.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from allfives_env.batched_engine.layout import (  # noqa: F401  (the layout, documented there)
    EV_DRAW,
    EV_PASS,
    EV_PLAY,
    F_BONE_END,
    F_BONE_POS,
    F_CUR,
    F_DEV_N,
    F_DONE_LEADER,
    F_EV_N,
    F_EXT_LEADER,
    F_FIN_TRUNC,
    F_FIN_WINNER,
    F_FORCED,
    F_GAME_ENDED,
    F_GAME_OVER,
    F_GAMES,
    F_HAND_ENDED,
    F_HAND_IDX,
    F_HAND_OVER,
    F_HWINNER,
    F_LAST_DOM,
    F_LEAD_TILE,
    F_LEADER,
    F_NARMS,
    F_NEED_DEAL,
    F_NPLAYED,
    F_PLAYED_M,
    F_POINTS,
    F_REASON,
    F_SPIN_WAIT,
    F_SPINNER,
    F_TRUNC,
    F_WINNER,
    K_AUTORESET,
    K_EXT,
    K_FIRST,
    K_HAND_SIZE,
    K_IMMEDIATE,
    K_LOG,
    K_MAX_HANDS,
    K_NEXT,
    K_PLAYERS,
    K_RESERVE,
    K_ROUND_TOTAL,
    K_SIDES,
    K_SPINNER,
    K_SUBTRACT,
    K_TARGET,
    K_TEAMS,
    LEADER_HAND_WINNER,
    LEADER_HIGHEST_DOUBLE,
    LEADER_RANDOM,
    MAX_EVENTS,
    NA,
    NG,
    NK,
    NT,
    R_BEFORE,
    R_CNT,
    R_DBL,
    R_DELTA,
    R_ENDS,
    R_FINAL,
    R_HANDS,
    R_HPTS,
    R_LACKS,
    R_SCORES,
    REASON_BLOCKED,
    REASON_DOMINO,
    REASON_TARGET,
    SPIN_LEAD,
    SPIN_NONE,
    T_DONE_ORDER,
    T_ORDER,
    T_PLAYED,
)
from allfives_env.game.layout import open_total
from allfives_env.game.observation import OBS_SIZE, OBS_VIEWS
from allfives_env.game.tiles import IS_DOUBLE, OTHER_HALF, SUIT_MASK, TILE_HIGH, TILE_LOW, TILE_PIPS

SUIT = np.array(SUIT_MASK, dtype=np.int64)
LOW = np.array(TILE_LOW, dtype=np.int64)
HIGH = np.array(TILE_HIGH, dtype=np.int64)
PIPS = np.array(TILE_PIPS, dtype=np.int64)
ISD = np.array(IS_DOUBLE, dtype=np.int64)
OTHER = np.array(OTHER_HALF, dtype=np.int64)
NEWCOUNT = np.array([OTHER_HALF[i] * (2 if IS_DOUBLE[i // 7] else 1) for i in range(196)],
                    dtype=np.int64)

O_HAND = OBS_VIEWS["hand"].start
O_PLAYED = OBS_VIEWS["played_by"].start
O_ARMS = OBS_VIEWS["arms"].start
O_SPINNER = OBS_VIEWS["spinner"].start
O_LEAD = OBS_VIEWS["lead"].start
O_OPEN = OBS_VIEWS["open_sum"].start
O_SIZES = OBS_VIEWS["hand_sizes"].start
O_BONE = OBS_VIEWS["boneyard"].start
O_SEATS = OBS_VIEWS["seats"].start
O_PARTNER = OBS_VIEWS["partner"].start
O_SCORES = OBS_VIEWS["scores"].start
O_MARGIN = OBS_VIEWS["lead_margin"].start
O_LACKS = OBS_VIEWS["lacks"].start
O_UNSEEN = OBS_VIEWS["unseen_suits"].start
O_POINTS = OBS_VIEWS["action_points"].start
O_PLAYERS = OBS_VIEWS["players"].start
O_RULES = OBS_VIEWS["rules"].start
OBS_N = OBS_SIZE

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


# ---------------------------------------------------------------- small helpers
@njit(cache=True, inline="always")
def popcount(x: int) -> int:
    """Set bits of a tile set (x < 2**32)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    return (((x + (x >> 4)) & 0x0F0F0F0F) * 0x01010101 >> 24) & 0xFF


@njit(cache=True, inline="always")
def trailing(m: int) -> int:
    """Index of the lowest set bit of m > 0."""
    return popcount((m & -m) - 1)


@njit(cache=True)
def splitmix(state: np.ndarray, i: int) -> np.uint64:
    """The next 64-bit word of the splitmix64 stream ``state[i]``."""
    state[i] = state[i] + _GOLDEN
    z = state[i]
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def below(state: np.ndarray, i: int, k: int) -> int:
    """A uniform int in ``[0, k)`` from stream ``state[i]``."""
    u = float(splitmix(state, i) >> _S11) * (1.0 / 9007199254740992.0)
    return int(u * k)


@njit(cache=True)
def uniform(state: np.ndarray, i: int) -> float:
    return float(splitmix(state, i) >> _S11) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def side_of(R: np.ndarray, seat: int) -> int:
    return seat % 2 if R[K_TEAMS] else seat


@njit(cache=True, inline="always")
def round5(p: int) -> int:
    return 5 * ((p + 2) // 5)


@njit(cache=True)
def pips_left(hand: int) -> int:
    total = 0
    t = 0
    while hand:
        if hand & 1:
            total += PIPS[t]
        hand >>= 1
        t += 1
    return total


@njit(cache=True)
def open_mask(G: np.ndarray, A: np.ndarray, b: int) -> int:
    if G[b, F_NPLAYED] == 0:
        return (1 << 28) - 1
    m = SUIT[A[b, R_ENDS, 0]] | SUIT[A[b, R_ENDS, 1]]
    if G[b, F_NARMS] == 4:
        m |= SUIT[A[b, R_ENDS, 2]] | SUIT[A[b, R_ENDS, 3]]
    return m


@njit(cache=True)
def open_sum(G: np.ndarray, A: np.ndarray, b: int) -> int:
    if G[b, F_NPLAYED] == 1:
        return PIPS[G[b, F_LEAD_TILE]]
    return arms_total(A[b, R_ENDS], A[b, R_DBL], A[b, R_CNT], G[b, F_NARMS])


#: the open-end total of a layout past its first tile: the scalar engine's own function
#: (:func:`allfives_env.game.layout.open_total`), compiled here, so both engines count alike
arms_total = njit(cache=True, inline="always")(open_total)


@njit(cache=True, inline="always")
def place(ends: np.ndarray, dbl: np.ndarray, cnt: np.ndarray, n_arms: int, wait: int,
          spinner: int, action: int) -> int:
    """The one layout arithmetic of the numba code (``layout.layout_after``): play
    ``action`` onto the layout ``ends, dbl, cnt`` in place; returns its arms afterwards (2, or
    4 once the spinner's other two arms open). ``wait``/``spinner``: the layout's
    ``F_SPIN_WAIT`` and ``F_SPINNER``; who becomes the spinner is the caller's bookkeeping."""
    t = action // 5
    end = action % 5
    if end == 0:
        ends[0] = LOW[t]
        ends[1] = HIGH[t]
        dbl[0] = ISD[t]
        dbl[1] = ISD[t]
        return 2
    i = end - 1
    ends[i] = OTHER[t * 7 + ends[i]]
    dbl[i] = ISD[t]
    cnt[i] += 1
    if wait == i or (wait == SPIN_LEAD and cnt[0] and cnt[1]):
        v = LOW[spinner]
        ends[2] = v
        ends[3] = v
        return 4
    return n_arms


@njit(cache=True)
def lp(ends: np.ndarray, dbl: np.ndarray, cnt: np.ndarray, n_arms: int, action: int) -> int:
    """``layout.layout_points`` on a layout given as arrays."""
    t = action // 5
    end = action % 5
    if end == 0:
        p = PIPS[t]
        return p if p % 5 == 0 else 0
    i = end - 1
    total = 0
    for j in range(n_arms):
        if j == i:
            total += OTHER[t * 7 + ends[j]] * (2 if ISD[t] else 1)
        elif j < 2 or cnt[j]:
            total += ends[j] * (1 + dbl[j])
    return total if total % 5 == 0 else 0


@njit(cache=True)
def layout_points(G: np.ndarray, A: np.ndarray, b: int, action: int) -> int:
    """Points ``action`` scores now in game ``b`` (``layout.layout_points``)."""
    return lp(A[b, R_ENDS], A[b, R_DBL], A[b, R_CNT], G[b, F_NARMS], action)


@njit(cache=True, inline="always")
def legal_list(G: np.ndarray, A: np.ndarray, b: int, out: np.ndarray) -> int:
    """Write the legal actions of game b's seat to act into ``out``, in increasing order
    (``GameState.legal_actions()``); return how many."""
    if G[b, F_HAND_OVER]:
        return 0
    hand = A[b, R_HANDS, G[b, F_CUR]]
    n = 0
    if G[b, F_NPLAYED] == 0:
        if G[b, F_FORCED] >= 0:
            out[0] = G[b, F_FORCED] * 5
            return 1
        while hand:
            out[n] = trailing(hand) * 5
            n += 1
            hand &= hand - 1
        return n
    narms = G[b, F_NARMS]
    s0 = SUIT[A[b, R_ENDS, 0]]
    s1 = SUIT[A[b, R_ENDS, 1]]
    s2 = SUIT[A[b, R_ENDS, 2]] if narms == 4 else 0
    s3 = SUIT[A[b, R_ENDS, 3]] if narms == 4 else 0
    m = hand & (s0 | s1 | s2 | s3)
    suits = (s0, s1, s2, s3)
    while m:  # tiles in increasing order, then arms: actions come out sorted
        t = trailing(m)
        for i in range(4):
            if suits[i] >> t & 1:
                out[n] = t * 5 + i + 1
                n += 1
        m &= m - 1
    return n


@njit(cache=True)
def sorted_legal(G: np.ndarray, A: np.ndarray, b: int, out: np.ndarray) -> int:
    """:func:`legal_list`, which already gives the engine's increasing order."""
    return legal_list(G, A, b, out)


# ---------------------------------------------------------------- dealing
@njit(cache=True)
def shuffle_deal(T: np.ndarray, rng: np.ndarray, b: int) -> None:
    order = T[b, T_ORDER]
    for i in range(28):
        order[i] = i
    for i in range(27, 0, -1):
        j = below(rng, b, i + 1)
        x = order[i]
        order[i] = order[j]
        order[j] = x


@njit(cache=True)
def highest_double_lead(A: np.ndarray, b: int, n: int) -> tuple:
    best_seat, best_key, best_tile = -1, -1, -1
    for s in range(n):
        hand = A[b, R_HANDS, s]
        for t in range(28):
            if hand >> t & 1:
                key = ISD[t] * 10000 + PIPS[t] * 100 + HIGH[t]
                if key > best_key:
                    best_seat, best_key, best_tile = s, key, t
    return best_seat, best_tile


@njit(cache=True)
def start_hand(b: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
               rng: np.ndarray) -> None:
    """Set up game b's hand from ``T[b, T_ORDER]`` (``engine.GameState._start_hand``)."""
    n = R[K_PLAYERS]
    k = R[K_HAND_SIZE]
    order = T[b, T_ORDER]
    for s in range(4):
        h = 0
        if s < n:
            for j in range(k):
                h |= 1 << order[s * k + j]
        A[b, R_HANDS, s] = h
        A[b, R_LACKS, s] = 0
        A[b, R_ENDS, s] = 0
        A[b, R_DBL, s] = 0
        A[b, R_CNT, s] = 0
    for t in range(28):
        T[b, T_PLAYED, t] = -1
    bone_len = 28 - n * k
    G[b, F_BONE_POS] = n * k
    G[b, F_BONE_END] = n * k + max(0, bone_len - R[K_RESERVE])
    G[b, F_NARMS] = 0
    G[b, F_NPLAYED] = 0
    G[b, F_PLAYED_M] = 0
    G[b, F_LEAD_TILE] = -1
    G[b, F_SPINNER] = -1
    G[b, F_SPIN_WAIT] = SPIN_NONE
    G[b, F_HAND_OVER] = 0
    G[b, F_EV_N] = 0
    G[b, F_NEED_DEAL] = 0
    rule = R[K_FIRST] if G[b, F_HAND_IDX] == 0 else R[K_NEXT]
    leader, forced = -1, -1
    if rule == LEADER_HAND_WINNER:
        if G[b, F_LAST_DOM] >= 0:
            leader = G[b, F_LAST_DOM]
        rule = R[K_FIRST]
    if leader < 0:
        if rule == LEADER_HIGHEST_DOUBLE:
            leader, forced = highest_double_lead(A, b, n)
        elif G[b, F_EXT_LEADER] >= 0:
            leader = G[b, F_EXT_LEADER]
        else:
            leader = below(rng, b, n)
    G[b, F_LEADER] = leader
    G[b, F_FORCED] = forced
    G[b, F_CUR] = leader


@njit(cache=True)
def new_game(b: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, rng: np.ndarray,
             master: np.ndarray) -> None:
    """Zero game b's scores and seed its stream from ``master`` (no deal yet)."""
    for s in range(4):
        A[b, R_SCORES, s] = 0
    G[b, F_HAND_IDX] = 0
    G[b, F_GAME_OVER] = 0
    G[b, F_WINNER] = -1
    G[b, F_TRUNC] = 0
    G[b, F_LAST_DOM] = -1
    G[b, F_GAMES] += 1
    rng[b] = splitmix(master, 0)


@njit(cache=True)
def deal_or_wait(b: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
                 rng: np.ndarray, need: int) -> None:
    """Deal the next hand now (internal deals), or mark it wanted from outside."""
    if R[K_EXT]:
        G[b, F_NEED_DEAL] = need
        G[b, F_HAND_OVER] = 1
    else:
        shuffle_deal(T, rng, b)
        G[b, F_EXT_LEADER] = -1
        start_hand(b, R, G, A, T, rng)


@njit(cache=True)
def reset_games(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
                rng: np.ndarray, master: np.ndarray) -> None:
    for b in idx:
        new_game(b, R, G, A, rng, master)
        deal_or_wait(b, R, G, A, T, rng, 2)


@njit(cache=True)
def start_hands(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
                rng: np.ndarray) -> None:
    """Start the hands dealt from outside into ``T[b, T_ORDER]`` / ``G[b, F_EXT_LEADER]``."""
    for b in idx:
        start_hand(b, R, G, A, T, rng)


# ---------------------------------------------------------------- playing
@njit(cache=True, inline="always")
def log_event(R: np.ndarray, G: np.ndarray, EV: np.ndarray, EVP: np.ndarray, b: int, kind: int,
              seat: int, tile: int, end: int, points: int) -> None:
    if R[K_LOG]:
        j = G[b, F_EV_N]
        EV[b, j, 0] = kind
        EV[b, j, 1] = seat
        EV[b, j, 2] = tile
        EV[b, j, 3] = end
        EVP[b, j] = points
        G[b, F_EV_N] = j + 1


@njit(cache=True)
def end_game(G: np.ndarray, b: int, winner: int) -> None:
    G[b, F_GAME_OVER] = 1
    G[b, F_WINNER] = winner


@njit(cache=True)
def end_hand(b: int, reason: int, winner: int, pts: np.ndarray, R: np.ndarray, G: np.ndarray,
             A: np.ndarray, T: np.ndarray, EV: np.ndarray, EVP: np.ndarray,
             DEV: np.ndarray, DEVP: np.ndarray) -> None:
    """``GameState._end_hand``: score the hand, decide the game; copy the log if logging."""
    sides = R[K_SIDES]
    G[b, F_HAND_OVER] = 1
    G[b, F_HAND_ENDED] = 1
    for i in range(4):
        A[b, R_HPTS, i] = pts[i] if i < sides else 0
        if i < sides:
            A[b, R_SCORES, i] += pts[i]
    G[b, F_REASON] = reason
    G[b, F_HWINNER] = winner
    if reason != REASON_DOMINO:
        G[b, F_LAST_DOM] = -1
    if reason == REASON_TARGET:
        end_game(G, b, winner)
    else:
        top = A[b, R_SCORES, 0]
        first, count = 0, 1
        for i in range(1, sides):
            s = A[b, R_SCORES, i]
            if s > top:
                top, first, count = s, i, 1
            elif s == top:
                count += 1
        if top >= R[K_TARGET] and (R[K_IMMEDIATE] or count == 1):
            end_game(G, b, first)
        elif G[b, F_HAND_IDX] + 1 >= R[K_MAX_HANDS]:
            G[b, F_TRUNC] = 1
            end_game(G, b, -1)
    if R[K_LOG]:
        n = G[b, F_EV_N]
        DEV[b, :n] = EV[b, :n]
        DEVP[b, :n] = EVP[b, :n]
        G[b, F_DEV_N] = n
        T[b, T_DONE_ORDER] = T[b, T_ORDER]
        G[b, F_DONE_LEADER] = G[b, F_LEADER]


@njit(cache=True)
def collect(b: int, winner: int, R: np.ndarray, A: np.ndarray, pts: np.ndarray) -> None:
    for i in range(4):
        pts[i] = 0
    total, rounded = 0, 0
    for s in range(R[K_PLAYERS]):
        if side_of(R, s) != winner:
            p = pips_left(A[b, R_HANDS, s])
            total += p
            rounded += round5(p)
    pts[winner] = round5(total) if R[K_ROUND_TOTAL] else rounded


@njit(cache=True)
def subtract_own(b: int, R: np.ndarray, A: np.ndarray, pts: np.ndarray) -> None:
    for i in range(4):
        pts[i] = 0
    for s in range(R[K_PLAYERS]):
        pts[side_of(R, s)] -= round5(pips_left(A[b, R_HANDS, s]))


@njit(cache=True)
def end_blocked(b: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
                EV: np.ndarray, EVP: np.ndarray, DEV: np.ndarray, DEVP: np.ndarray) -> None:
    pts = np.zeros(4, dtype=np.int64)
    if R[K_SUBTRACT]:
        subtract_own(b, R, A, pts)
        end_hand(b, REASON_BLOCKED, -1, pts, R, G, A, T, EV, EVP, DEV, DEVP)
        return
    pips = np.zeros(4, dtype=np.int64)
    tiles = np.zeros(4, dtype=np.int64)
    for s in range(R[K_PLAYERS]):
        pips[side_of(R, s)] += pips_left(A[b, R_HANDS, s])
        tiles[side_of(R, s)] += popcount(A[b, R_HANDS, s])
    best = 0
    for i in range(1, R[K_SIDES]):
        if pips[i] < pips[best] or (pips[i] == pips[best] and tiles[i] < tiles[best]):
            best = i
    ties = 0
    for i in range(R[K_SIDES]):
        if pips[i] == pips[best] and tiles[i] == tiles[best]:
            ties += 1
    if ties > 1:
        end_hand(b, REASON_BLOCKED, -1, pts, R, G, A, T, EV, EVP, DEV, DEVP)
    else:
        collect(b, best, R, A, pts)
        end_hand(b, REASON_BLOCKED, best, pts, R, G, A, T, EV, EVP, DEV, DEVP)


@njit(cache=True)
def anyone_can_play(b: int, n: int, A: np.ndarray, open_m: int) -> bool:
    for s in range(n):
        if A[b, R_HANDS, s] & open_m:
            return True
    return False


@njit(cache=True)
def advance(b: int, seat: int, open_m: int, R: np.ndarray, G: np.ndarray, A: np.ndarray,
            T: np.ndarray, EV: np.ndarray, EVP: np.ndarray, DEV: np.ndarray,
            DEVP: np.ndarray) -> None:
    """``GameState._advance``: forced draws and passes up to the next seat that can act."""
    n = R[K_PLAYERS]
    order = T[b, T_ORDER]
    while True:
        seat = seat + 1 if seat + 1 < n else 0
        if A[b, R_HANDS, seat] & open_m:
            G[b, F_CUR] = seat
            return
        if G[b, F_BONE_POS] >= G[b, F_BONE_END] and not anyone_can_play(b, n, A, open_m):
            end_blocked(b, R, G, A, T, EV, EVP, DEV, DEVP)
            return
        numbers = 0
        for i in range(G[b, F_NARMS]):
            numbers |= 1 << A[b, R_ENDS, i]
        kept = 0
        while G[b, F_BONE_POS] < G[b, F_BONE_END]:
            t = order[G[b, F_BONE_POS]]
            G[b, F_BONE_POS] += 1
            A[b, R_HANDS, seat] |= 1 << t
            log_event(R, G, EV, EVP, b, EV_DRAW, seat, t, 0, 0)
            if (1 << t) & open_m:
                A[b, R_LACKS, seat] = numbers if kept else A[b, R_LACKS, seat] | numbers
                G[b, F_CUR] = seat
                return
            kept += 1
        A[b, R_LACKS, seat] = numbers if kept else A[b, R_LACKS, seat] | numbers
        log_event(R, G, EV, EVP, b, EV_PASS, seat, 0, 0, 0)
        if not anyone_can_play(b, n, A, open_m):
            end_blocked(b, R, G, A, T, EV, EVP, DEV, DEVP)
            return


@njit(cache=True, inline="always")
def apply(b: int, action: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
          EV: np.ndarray, EVP: np.ndarray, DEV: np.ndarray, DEVP: np.ndarray) -> int:
    """``GameState.apply`` for game b; returns the points the play scored."""
    seat = G[b, F_CUR]
    t = action // 5
    end = action % 5
    A[b, R_HANDS, seat] ^= 1 << t
    T[b, T_PLAYED, t] = seat
    G[b, F_PLAYED_M] |= 1 << t
    G[b, F_NPLAYED] += 1
    isd = ISD[t]
    ends = A[b, R_ENDS]
    dbl = A[b, R_DBL]
    cnt = A[b, R_CNT]
    before = G[b, F_NARMS]
    arms = place(ends, dbl, cnt, before, G[b, F_SPIN_WAIT], G[b, F_SPINNER], action)
    if end == 0:
        G[b, F_LEAD_TILE] = t
        G[b, F_NARMS] = 2
        if isd and R[K_SPINNER]:
            G[b, F_SPINNER] = t
            G[b, F_SPIN_WAIT] = SPIN_LEAD
        total = PIPS[t]
    else:
        i = end - 1
        if arms == 4 and before != 4:  # the spinner's other arms opened
            G[b, F_NARMS] = 4
            G[b, F_SPIN_WAIT] = SPIN_NONE
        elif isd and G[b, F_SPINNER] < 0 and R[K_SPINNER]:
            G[b, F_SPINNER] = t
            G[b, F_SPIN_WAIT] = i
        total = arms_total(ends, dbl, cnt, G[b, F_NARMS])
    points = total if total % 5 == 0 else 0
    log_event(R, G, EV, EVP, b, EV_PLAY, seat, t, end, points)
    side = side_of(R, seat)
    if points:
        A[b, R_SCORES, side] += points
        if R[K_IMMEDIATE] and A[b, R_SCORES, side] >= R[K_TARGET]:
            end_hand(b, REASON_TARGET, side, np.zeros(4, dtype=np.int64), R, G, A, T, EV, EVP,
                     DEV, DEVP)
            return points
    if A[b, R_HANDS, seat] == 0:
        G[b, F_LAST_DOM] = seat
        pts = np.zeros(4, dtype=np.int64)
        if R[K_SUBTRACT]:
            subtract_own(b, R, A, pts)
        else:
            collect(b, side, R, A, pts)
        end_hand(b, REASON_DOMINO, side, pts, R, G, A, T, EV, EVP, DEV, DEVP)
        return points
    open_m = SUIT[ends[0]] | SUIT[ends[1]]
    if G[b, F_NARMS] == 4:
        open_m |= SUIT[ends[2]] | SUIT[ends[3]]
    nxt = seat + 1 if seat + 1 < R[K_PLAYERS] else 0
    if A[b, R_HANDS, nxt] & open_m:
        G[b, F_CUR] = nxt
    else:
        advance(b, seat, open_m, R, G, A, T, EV, EVP, DEV, DEVP)
    return points


@njit(cache=True)
def step(actions: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
         rng: np.ndarray, master: np.ndarray, EV: np.ndarray, EVP: np.ndarray,
         DEV: np.ndarray, DEVP: np.ndarray) -> None:
    """Play ``actions[b]`` in every game b with ``actions[b] >= 0`` that is in play; deal the
    next hand (or mark it wanted); with autoreset start a new game after a finished one.
    Per game: ``F_POINTS``, ``F_HAND_ENDED``, ``F_GAME_ENDED``, ``R_BEFORE`` (scores before)
    and ``R_FINAL`` (scores at the game's end) describe the step."""
    sides = R[K_SIDES]
    for b in range(actions.shape[0]):
        G[b, F_HAND_ENDED] = 0
        G[b, F_GAME_ENDED] = 0
        G[b, F_POINTS] = 0
        for i in range(4):
            A[b, R_BEFORE, i] = A[b, R_SCORES, i]
            A[b, R_DELTA, i] = 0
        a = actions[b]
        if a < 0 or G[b, F_HAND_OVER]:
            continue
        G[b, F_POINTS] = apply(b, a, R, G, A, T, EV, EVP, DEV, DEVP)
        if not G[b, F_HAND_OVER]:
            for i in range(sides):
                A[b, R_DELTA, i] = A[b, R_SCORES, i] - A[b, R_BEFORE, i]
            continue
        for i in range(sides):
            A[b, R_DELTA, i] = A[b, R_SCORES, i] - A[b, R_BEFORE, i]
        if not G[b, F_GAME_OVER]:
            G[b, F_HAND_IDX] += 1
            deal_or_wait(b, R, G, A, T, rng, 1)
            continue
        G[b, F_GAME_ENDED] = 1
        G[b, F_FIN_WINNER] = G[b, F_WINNER]
        G[b, F_FIN_TRUNC] = G[b, F_TRUNC]
        for i in range(4):
            A[b, R_FINAL, i] = A[b, R_SCORES, i] if i < sides else 0
        if R[K_AUTORESET]:
            new_game(b, R, G, A, rng, master)
            deal_or_wait(b, R, G, A, T, rng, 2)


# ---------------------------------------------------------------- masks and observations
@njit(cache=True)
def legal_mask(G: np.ndarray, A: np.ndarray, out: np.ndarray) -> None:
    """``out[b, a]``: action a is legal in game b (all False when no hand is in play)."""
    buf = np.empty(140, dtype=np.int64)
    for b in range(out.shape[0]):
        for k in range(140):
            out[b, k] = False
        n = legal_list(G, A, b, buf)
        for j in range(n):
            out[b, buf[j]] = True


def templates(R: np.ndarray) -> np.ndarray:
    """[4, 386] float32: per observing seat the rule- and seat-fixed parts of an observation
    (``observation._template``)."""
    out = np.zeros((4, OBS_N), dtype=np.float32)
    n = R[K_PLAYERS]
    for seat in range(n):
        for r in range(n):
            s = (seat + r) % n
            out[seat, O_SEATS + r] = 1.0
            if side_of(R, s) == side_of(R, seat):
                out[seat, O_PARTNER + r] = 1.0
        out[seat, O_PLAYERS + n - 2] = 1.0
        out[seat, O_RULES] = 1.0 if R[K_TEAMS] else 0.0
        out[seat, O_RULES + 1] = min(R[K_TARGET] / 500.0, 2.0)
        out[seat, O_RULES + 2] = 0.0 if R[K_SUBTRACT] else 1.0
        out[seat, O_RULES + 3] = 0.0 if R[K_IMMEDIATE] else 1.0
    return out


@njit(cache=True, inline="always")
def clip2(x: float) -> float:
    return x if -2.0 <= x <= 2.0 else (2.0 if x > 2.0 else -2.0)


@njit(cache=True, inline="always")
def observe_one(b: int, seat: int, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
                obs: np.ndarray, tmpl: np.ndarray, legal: np.ndarray, n_legal: int) -> None:
    """``observation.observe(state, seat)`` for game b into ``obs``; ``legal[:n_legal]``: the
    legal actions when ``seat`` is to act (``n_legal < 0``: not to act)."""
    n = R[K_PLAYERS]
    target = R[K_TARGET]
    for i in range(OBS_N):  # an explicit loop: numba's slice assignment is slower
        obs[i] = tmpl[seat, i]
    hand = A[b, R_HANDS, seat]
    m = hand
    while m:
        t = trailing(m)
        obs[O_HAND + t] = 1.0
        m &= m - 1
    played = G[b, F_PLAYED_M]
    m = played
    while m:
        t = trailing(m)
        p = T[b, T_PLAYED, t] - seat
        obs[O_PLAYED + (p + n if p < 0 else p) * 28 + t] = 1.0
        m &= m - 1
    nplayed = G[b, F_NPLAYED]
    narms = G[b, F_NARMS]
    total = 0
    for i in range(narms):
        o = O_ARMS + 10 * i
        e = A[b, R_ENDS, i]
        d = A[b, R_DBL, i]
        obs[o] = 1.0
        if i < 2 or A[b, R_CNT, i]:
            obs[o + 1] = 1.0
            total += e * (1 + d)
        obs[o + 2 + e] = 1.0
        if d:
            obs[o + 9] = 1.0
    if G[b, F_SPINNER] < 0:
        obs[O_SPINNER] = 1.0
    elif G[b, F_SPIN_WAIT] != SPIN_NONE:
        obs[O_SPINNER + 1] = 1.0
    else:
        obs[O_SPINNER + 2] = 1.0
    if nplayed:
        obs[O_OPEN] = (PIPS[G[b, F_LEAD_TILE]] if nplayed == 1 else total) / 60.0
    else:
        obs[O_LEAD] = 1.0
    pos = G[b, F_BONE_POS]
    obs[O_BONE] = (G[b, F_BONE_END] - pos) / 28.0
    obs[O_BONE + 1] = (28 - pos) / 28.0
    for r in range(n):
        s = seat + r
        if s >= n:
            s -= n
        obs[O_SIZES + r] = popcount(A[b, R_HANDS, s]) / 10.0
        obs[O_SCORES + r] = clip2(A[b, R_SCORES, side_of(R, s)] / target)
        lk = A[b, R_LACKS, s]
        while lk:
            obs[O_LACKS + 7 * r + trailing(lk)] = 1.0
            lk &= lk - 1
    my_side = side_of(R, seat)
    best_other = -(1 << 62)
    for i in range(R[K_SIDES]):
        if i != my_side and A[b, R_SCORES, i] > best_other:
            best_other = A[b, R_SCORES, i]
    obs[O_MARGIN] = clip2((A[b, R_SCORES, my_side] - best_other) / target)
    unseen = ((1 << 28) - 1) & ~(hand | played)
    for k in range(7):
        obs[O_UNSEEN + k] = popcount(unseen & SUIT[k]) / 7.0
    if n_legal > 0:
        write_action_points(b, G, A, obs, legal, n_legal, total)


@njit(cache=True, inline="always")
def write_action_points(b: int, G: np.ndarray, A: np.ndarray, obs: np.ndarray,
                        legal: np.ndarray, n: int, total: int) -> None:
    """``points_if(a) / 60`` for the legal actions that score; ``total``: the open-end
    total summed over the arms that count."""
    if G[b, F_NPLAYED] == 0:
        for j in range(n):
            p = PIPS[legal[j] // 5]
            if p and p % 5 == 0:
                obs[O_POINTS + legal[j]] = p / 60.0
        return
    for j in range(n):
        a = legal[j]
        i = a % 5 - 1
        e = A[b, R_ENDS, i]
        own = e * (1 + A[b, R_DBL, i]) if (i < 2 or A[b, R_CNT, i]) else 0
        p = total - own + NEWCOUNT[(a // 5) * 7 + e]
        if p and p % 5 == 0:
            obs[O_POINTS + a] = p / 60.0


@njit(cache=True)
def observe_into(idx: np.ndarray, seats: np.ndarray, R: np.ndarray, G: np.ndarray,
                 A: np.ndarray, T: np.ndarray, tmpl: np.ndarray, out: np.ndarray,
                 mask: np.ndarray) -> None:
    """``out[j] = observe(game idx[j], seat seats[j])``; the legal mask into ``mask[j]``
    too when ``mask`` has rows (``seats[j]`` the seat to act then)."""
    buf = np.empty(140, dtype=np.int64)
    masked = mask.shape[0] > 0
    for j in range(idx.shape[0]):
        b = idx[j]
        n = -1
        if G[b, F_CUR] == seats[j] and not G[b, F_HAND_OVER]:
            n = legal_list(G, A, b, buf)
        if masked:
            mask[j, :] = False
            for k in range(max(n, 0)):
                mask[j, buf[k]] = True
        observe_one(b, seats[j], R, G, A, T, out[j], tmpl, buf, n)


@njit(cache=True)
def observe(idx: np.ndarray, seats: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray,
            T: np.ndarray, tmpl: np.ndarray, out: np.ndarray) -> None:
    """``out[j] = observe(game idx[j], seat seats[j])``."""
    observe_into(idx, seats, R, G, A, T, tmpl, out, np.empty((0, 140), dtype=np.bool_))


@njit(cache=True)
def random_actions(idx: np.ndarray, G: np.ndarray, A: np.ndarray, rng: np.ndarray,
                   out: np.ndarray) -> None:
    """A uniform legal action for games ``idx`` (stream ``rng[b]`` per game slot b)."""
    buf = np.empty(140, dtype=np.int64)
    for j in range(idx.shape[0]):
        b = idx[j]
        n = legal_list(G, A, b, buf)
        out[j] = buf[below(rng, b, n)] if n > 1 else buf[0]


@njit(cache=True)
def observe_mask(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
                 tmpl: np.ndarray, out: np.ndarray, mask: np.ndarray) -> None:
    """The seat to act's observation and legal mask of games ``idx`` (one pass)."""
    seats = np.empty(idx.shape[0], dtype=np.int64)
    for j in range(idx.shape[0]):
        seats[j] = G[idx[j], F_CUR]
    observe_into(idx, seats, R, G, A, T, tmpl, out, mask)
