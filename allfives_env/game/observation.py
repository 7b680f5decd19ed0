"""Observation layout ``allfives-obs/1``: one flat float32 vector per seat, with named views.

The same layout serves 2, 3 and 4 seats. It is seat-relative: slot ``r`` of every per-seat
block describes the seat ``r`` places after the observer in turn order (slot 0 is the observer);
slots past the seat count are zero. Sections, in order:

=================  ====  ==================================================================
name               size  content
=================  ====  ==================================================================
``hand``             28  1 for each tile in the observer's hand
``played_by``       112  4 slots x 28 tiles: 1 where that seat played that tile this hand
``arms``             40  per arm (left, right, up, down): open, counts toward the open-end
                         total, the open number one-hot (7), exposed tile is a double
``spinner``           3  no spinner yet / spinner with a bare side / spinner's ends open
``lead``              1  the layout is empty: the observer leads
``open_sum``          1  the open-end total now / 60
``hand_sizes``        4  per slot: tiles in hand / 10
``boneyard``          2  tiles that can still be drawn / 28, tiles in the boneyard / 28
``seats``             4  per slot: a seat sits there
``partner``           4  per slot: that seat is on the observer's side (slot 0 included)
``scores``            4  per slot: that seat's side score / target (clipped to [-2, 2])
``lead_margin``       1  (own side score - best other side score) / target, clipped
``lacks``            28  4 slots x 7 numbers: the seat is known to lack that number
``unseen_suits``      7  per number: tiles carrying it that the observer cannot see / 7
``action_points``   140  per action: points it scores now / 60 (0 when illegal)
``players``           3  one-hot seat count 2, 3, 4
``rules``             4  teams, min(target / 500, 2), hand_end winner_collects,
                         win_check end_of_hand
=================  ====  ==================================================================

``OBS_VERSION`` changes whenever this layout changes; checkpoints record it.
"""

from __future__ import annotations

from array import array

import numpy as np

from allfives_env.game.engine import GameState
from allfives_env.game.layout import SPIN_NONE, arm_count, lead_total, score_of
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import (
    ALL_TILES_MASK,
    IS_DOUBLE,
    N_ACTIONS,
    N_ENDS,
    N_TILES,
    OTHER_HALF,
    SUIT_MASK,
    mask_to_tiles,
)

OBS_VERSION = 1
OBS_LAYOUT_ID = f"allfives-obs/{OBS_VERSION}"
_SECTIONS: tuple[tuple[str, int], ...] = (
    ("hand", 28), ("played_by", 112), ("arms", 40), ("spinner", 3), ("lead", 1),
    ("open_sum", 1), ("hand_sizes", 4), ("boneyard", 2), ("seats", 4), ("partner", 4),
    ("scores", 4), ("lead_margin", 1), ("lacks", 28), ("unseen_suits", 7),
    ("action_points", 140), ("players", 3), ("rules", 4),
)


def _slices(sections: tuple[tuple[str, int], ...]) -> dict[str, slice]:
    out, pos = {}, 0
    for name, size in sections:
        out[name] = slice(pos, pos + size)
        pos += size
    return out


OBS_VIEWS: dict[str, slice] = _slices(_SECTIONS)
OBS_SIZE: int = sum(size for _, size in _SECTIONS)
_O = {name: s.start for name, s in OBS_VIEWS.items()}


def named_views(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Split an observation vector into its named sections (views, not copies)."""
    return {name: obs[s] for name, s in OBS_VIEWS.items()}


def action_mask(state: GameState) -> np.ndarray:
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    if not state.hand_over:
        mask[state.legal_actions()] = 1
    return mask


def _template(rules: Rules, seat: int) -> np.ndarray:
    """The parts of the observation fixed by the rules and the seat."""
    key = (rules.key, seat)
    cached = _TEMPLATES.get(key)
    if cached is None:
        cached = np.zeros(OBS_SIZE, dtype=np.float32)
        for r in range(rules.players):
            s = (seat + r) % rules.players
            cached[_O["seats"] + r] = 1.0
            cached[_O["partner"] + r] = rules.side_of(s) == rules.side_of(seat)
        cached[_O["players"] + rules.players - 2] = 1.0
        cached[_O["rules"]:_O["rules"] + 4] = (
            rules.teams, min(rules.target / 500.0, 2.0), COLLECTS[rules.hand_end],
            not rules.immediate_win,
        )
        _TEMPLATES[key] = cached
    return cached


#: ``hand_end`` -> the observation's "winner collects" flag (a value missing here is a KeyError:
#: declared in rules.py, not implemented).
COLLECTS: dict[str, bool] = {"subtract_own": False, "winner_collects": True}
#: Caches keyed by the rules' value (Rules.key) and the seat: one entry per distinct rule set.
_TEMPLATES: dict[tuple[tuple, int], np.ndarray] = {}
_PLAYED, _LACKS, _ARMS = _O["played_by"], _O["lacks"], _O["arms"]
_HAND, _SIZES, _SCORES, _UNSEEN, _POINTS = (
    _O["hand"], _O["hand_sizes"], _O["scores"], _O["unseen_suits"], _O["action_points"])


_BITS7: tuple[tuple[int, ...], ...] = tuple(
    tuple(b for b in range(7) if x >> b & 1) for x in range(128))
#: _ONES7[x]: seven floats, 1.0 where the 7-bit number x has a bit set.
_ONES7: tuple[array, ...] = tuple(array("f", [float(x >> b & 1) for b in range(7)])
                                  for x in range(128))
#: per action: (tile * 7, arm index) for the action-points section.
_ACT_T7_ARM: tuple[tuple[int, int], ...] = tuple(
    ((a // N_ENDS) * 7, a % N_ENDS - 1) for a in range(N_ACTIONS))
#: _NEW_COUNT[t * 7 + n]: what tile t counts at the end of an arm when matched on number n.
_NEW_COUNT: tuple[int, ...] = tuple(
    OTHER_HALF[i] * (2 if IS_DOUBLE[i // 7] else 1) for i in range(N_TILES * 7))
_SPINNER, _LEAD, _BONE, _MARGIN, _OPEN = (
    _O["spinner"], _O["lead"], _O["boneyard"], _O["lead_margin"], _O["open_sum"])
_PLANS: dict[tuple[tuple, int], tuple] = {}


def _plan(rules: Rules, seat: int) -> tuple:
    """Per (rules, seat): the template as an ``array('f')``, the seats in slot order, and per
    absolute seat the offsets of its ``played_by`` and ``lacks`` blocks."""
    key = (rules.key, seat)
    plan = _PLANS.get(key)
    if plan is None:
        n = rules.players
        order = tuple((seat + r) % n for r in range(n))
        played_off = tuple(_PLAYED + ((s - seat) % n) * N_TILES for s in range(n))
        lack_off = tuple(_LACKS + 7 * ((s - seat) % n) for s in range(n))
        template = array("f", _template(rules, seat).tobytes())
        plan = _PLANS[key] = (template, order, played_off, lack_off)
    return plan


def observe(state: GameState, seat: int, legal: list[int] | None = None) -> np.ndarray:
    """The ``allfives-obs/1`` vector of ``seat``. ``legal``: the seat's legal actions when it
    is to act (computed if omitted).

    Built in an ``array('f')`` (cheap item writes) and returned as a float32 view of it."""
    rules = state.rules
    template, order, played_off, lack_off = _plan(rules, seat)
    obs = template[:]
    hand = state.hands[seat]
    obs[_HAND:_HAND + 7] = _ONES7[hand & 127]
    obs[_HAND + 7:_HAND + 14] = _ONES7[hand >> 7 & 127]
    obs[_HAND + 14:_HAND + 21] = _ONES7[hand >> 14 & 127]
    obs[_HAND + 21:_HAND + 28] = _ONES7[hand >> 21]
    played_by = state.played_by
    seen = hand
    for t in [t for t, s in enumerate(played_by) if s >= 0]:
        obs[played_off[played_by[t]] + t] = 1.0
        seen |= 1 << t
    _write_layout(state, obs)
    _write_seats(state, seat, obs, order, lack_off)
    unseen = ALL_TILES_MASK & ~seen
    obs[_UNSEEN:_UNSEEN + 7] = array("f", [(unseen & m).bit_count() / 7.0 for m in SUIT_MASK])
    if state.current == seat and not state.hand_over:
        _write_action_points(state, state.legal_actions() if legal is None else legal, obs)
    return np.frombuffer(obs, dtype=np.float32)


def _write_layout(state: GameState, obs: array) -> None:
    """The ``arms``, ``spinner``, ``lead``, ``open_sum`` and ``boneyard`` sections."""
    ends, dbl, cnt = state.ends, state.dbl, state.cnt
    for i in range(state.n_arms):
        o = _ARMS + 10 * i
        obs[o] = 1.0
        if i < 2 or cnt[i]:
            obs[o + 1] = 1.0
        obs[o + 2 + ends[i]] = 1.0
        if dbl[i]:
            obs[o + 9] = 1.0
    if state.spinner < 0:
        obs[_SPINNER] = 1.0
    elif state.spin_wait != SPIN_NONE:
        obs[_SPINNER + 1] = 1.0
    else:
        obs[_SPINNER + 2] = 1.0
    if state.n_played:
        obs[_OPEN] = state.open_sum() / 60.0
    else:
        obs[_LEAD] = 1.0
    obs[_BONE] = (state.bone_end - state.bone_pos) / 28.0
    obs[_BONE + 1] = (len(state.boneyard) - state.bone_pos) / 28.0


def _write_seats(state: GameState, seat: int, obs: array, order: tuple[int, ...],
                 lack_off: tuple[int, ...]) -> None:
    """The per-slot ``hand_sizes``, ``scores`` and ``lacks`` sections, and ``lead_margin``."""
    hands, lacks, side, scores = state.hands, state.lacks, state.side, state.scores
    target = state.rules.target
    r = 0
    for s in order:
        obs[_SIZES + r] = hands[s].bit_count() / 10.0
        x = scores[side[s]] / target
        obs[_SCORES + r] = x if -2.0 <= x <= 2.0 else (2.0 if x > 2.0 else -2.0)
        if lacks[s]:
            o = lack_off[s]
            for k in _BITS7[lacks[s]]:
                obs[o + k] = 1.0
        r += 1
    my_side = side[seat]
    best_other = max([sc for i, sc in enumerate(scores) if i != my_side])
    x = (scores[my_side] - best_other) / target
    obs[_MARGIN] = x if -2.0 <= x <= 2.0 else (2.0 if x > 2.0 else -2.0)


def _write_action_points(state: GameState, legal: list[int], obs: array) -> None:
    """``points_if(a) / 60`` for the legal actions that score (``layout_points`` inlined:
    the open-end total is summed once, then each action swaps its arm's count)."""
    if state.n_played == 0:
        for a in legal:
            p = score_of(lead_total(a // N_ENDS))
            if p:
                obs[_POINTS + a] = p / 60.0
        return
    ends, dbl, cnt = state.ends, state.dbl, state.cnt
    counts = [arm_count(ends, dbl, cnt, j) for j in range(state.n_arms)]
    total = sum(counts)
    for a in legal:
        t7, i = _ACT_T7_ARM[a]
        p = score_of(total - counts[i] + _NEW_COUNT[t7 + ends[i]])
        if p:
            obs[_POINTS + a] = p / 60.0


def _arm_ones(state: GameState, ones: list[int]) -> None:
    """Append the indices of the 1s of the ``arms``, ``spinner`` and ``lead`` sections."""
    for i in range(state.n_arms):
        o = _ARMS + 10 * i
        ones.append(o)
        if i < 2 or state.cnt[i]:
            ones.append(o + 1)
        ones.append(o + 2 + state.ends[i])
        if state.dbl[i]:
            ones.append(o + 9)
    if state.spinner < 0:
        ones.append(_O["spinner"])
    elif state.spin_wait != SPIN_NONE:
        ones.append(_O["spinner"] + 1)
    else:
        ones.append(_O["spinner"] + 2)
    if state.n_played == 0:
        ones.append(_O["lead"])


# ---------------------------------------------------------------------- full state
STATE_SIZE = 4 * 28 + 28 + 4 * 28 + 45 + 8 + 4 + 2


def encode_state(state: GameState) -> np.ndarray:
    """The perfect-information state (absolute seats) for centralized critics: every hand,
    the boneyard's tiles, who played what, the layout, scores, seat to act."""
    out = np.zeros(STATE_SIZE, dtype=np.float32)
    for s in range(state.n):
        for t in mask_to_tiles(state.hands[s]):
            out[s * 28 + t] = 1.0
    o = 112
    for t in state.boneyard[state.bone_pos:]:
        out[o + t] = 1.0
    o += 28
    for t, s in enumerate(state.played_by):
        if s >= 0:
            out[o + s * 28 + t] = 1.0
    o += 112
    layout: list[int] = []
    _arm_ones(state, layout)
    out[[o + i - _ARMS for i in layout]] = 1.0
    out[o + 44] = (state.open_sum() if state.n_played else 0) / 60.0
    o += 45
    for s in range(state.n):
        out[o + s] = min(2.0, max(-2.0, state.scores[state.rules.side_of(s)] / state.rules.target))
        out[o + 4 + s] = state.hands[s].bit_count() / 10.0
    o += 8
    if not state.hand_over:
        out[o + state.current] = 1.0
    o += 4
    out[o] = (state.bone_end - state.bone_pos) / 28.0
    out[o + 1] = state.n_played / 28.0
    return out


# ---------------------------------------------------------------------- hidden hands
#: What a seat cannot see, for training signals only (an oracle critic): every other seat's
#: hand, the seats in turn order from the seat's left, 28 values of 0/1 each (zeros for seats
#: the table lacks). The observation's own seat order, so the same seat means the same rows.
HIDDEN_HANDS_SIZE = 3 * 28

_BITS = np.arange(28, dtype=np.int64)


def hidden_hands(hands: np.ndarray, seat: np.ndarray, players: int) -> np.ndarray:
    """``[N, HIDDEN_HANDS_SIZE]`` float32: the hidden hands seen from ``seat[i]`` in game
    ``i``, from ``hands`` ``[N, 4]`` (tile bitmasks per absolute seat, as the batched engine
    holds them). Never an input of anything that plays."""
    n = len(seat)
    out = np.zeros((n, 3, 28), dtype=np.float32)
    rows = np.arange(n)
    for r in range(1, players):
        held = hands[rows, (seat + r) % players].astype(np.int64)
        out[:, r - 1] = (held[:, None] >> _BITS) & 1
    return out.reshape(n, HIDDEN_HANDS_SIZE)
