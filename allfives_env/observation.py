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
``rules``             4  teams, target / 500, hand_end winner_collects, win_check end_of_hand
=================  ====  ==================================================================

``OBS_VERSION`` changes whenever this layout changes; checkpoints record it.
"""

from __future__ import annotations

import numpy as np

from allfives_env.engine import SPIN_NONE, GameState
from allfives_env.rules import Rules
from allfives_env.tiles import ALL_TILES_MASK, N_ACTIONS, N_TILES, SUIT_MASK, mask_to_tiles

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
    key = (id(rules), seat)
    cached = _TEMPLATES.get(key)
    if cached is None:
        cached = np.zeros(OBS_SIZE, dtype=np.float32)
        for r in range(rules.players):
            s = (seat + r) % rules.players
            cached[_O["seats"] + r] = 1.0
            cached[_O["partner"] + r] = rules.side_of(s) == rules.side_of(seat)
        cached[_O["players"] + rules.players - 2] = 1.0
        cached[_O["rules"]:_O["rules"] + 4] = (
            rules.teams, rules.target / 500.0, rules.hand_end == "winner_collects",
            rules.win_check == "end_of_hand",
        )
        _TEMPLATES[key] = cached
        _KEEP_ALIVE.append(rules)  # ids stay unique while the template is cached
    return cached


_TEMPLATES: dict[tuple[int, int], np.ndarray] = {}
_KEEP_ALIVE: list[Rules] = []
_PLAYED, _LACKS, _ARMS = _O["played_by"], _O["lacks"], _O["arms"]
_HAND, _SIZES, _SCORES, _UNSEEN, _POINTS = (
    _O["hand"], _O["hand_sizes"], _O["scores"], _O["unseen_suits"], _O["action_points"])


def observe(state: GameState, seat: int, legal: list[int] | None = None) -> np.ndarray:
    """The ``allfives-obs/1`` vector of ``seat``. ``legal``: the seat's legal actions when it
    is to act (computed if omitted)."""
    rules, n = state.rules, state.n
    obs = _template(rules, seat).copy()
    hand = state.hands[seat]
    ones = [_HAND + t for t in mask_to_tiles(hand)]
    seen = hand
    for t, s in enumerate(state.played_by):
        if s >= 0:
            ones.append(_PLAYED + ((s - seat) % n) * N_TILES + t)
            seen |= 1 << t
    _arm_ones(state, ones)
    idx: list[int] = []
    vals: list[float] = []
    side, scores, target = state.side, state.scores, rules.target
    for r in range(n):
        s = (seat + r) % n
        idx.append(_SIZES + r)
        vals.append(state.hands[s].bit_count() / 10.0)
        idx.append(_SCORES + r)
        vals.append(min(2.0, max(-2.0, scores[side[s]] / target)))
        lacks = state.lacks[s]
        k = 0
        while lacks:
            if lacks & 1:
                ones.append(_LACKS + 7 * r + k)
            lacks >>= 1
            k += 1
    mine = scores[side[seat]]
    best_other = max(sc for i, sc in enumerate(scores) if i != side[seat])
    unseen = ALL_TILES_MASK & ~seen
    idx.extend((_O["boneyard"], _O["boneyard"] + 1, _O["lead_margin"], _O["open_sum"]))
    vals.extend(((state.bone_end - state.bone_pos) / 28.0,
                 (len(state.boneyard) - state.bone_pos) / 28.0,
                 min(2.0, max(-2.0, (mine - best_other) / target)),
                 (state.open_sum() if state.n_played else 0) / 60.0))
    for k in range(7):
        idx.append(_UNSEEN + k)
        vals.append((unseen & SUIT_MASK[k]).bit_count() / 7.0)
    if state.current == seat and not state.hand_over:
        for a in state.legal_actions() if legal is None else legal:
            p = state.points_if(a)
            if p:
                idx.append(_POINTS + a)
                vals.append(p / 60.0)
    obs[ones] = 1.0
    obs[idx] = vals
    return obs


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
