"""Action views: per legal action, a row of features beside the mask (option ``action_view``).

Every env of the project takes ``action_view`` (the AEC env, ``allfives/AllFives-v0`` through
``gymnasium.make`` and ``gymnasium.make_vec``, the trainers' vector env and
:class:`allfives_env.batched_engine.games.BatchedGames`); its values are :data:`ACTION_VIEWS`:

``raw`` (default)
    no rows: the observation is ``allfives-obs/1`` as it always was.
``facts``
    what the move does by the rules and what the seat can count (:data:`FACT_TABLE`): the tile and
    its pips, the end, the points it scores now, the open-end total after it, whether it
    makes the spinner or opens the spinner's arms, the numbers open after it, the tiles of
    each number the seat holds after it and cannot see, the total modulo 5, and which tiles
    would score on the layout after it (the scoring rule on the public layout, counted against
    the seat's hand and the tiles it cannot see). No evaluation, no lookahead. Computed
    here (:func:`facts_rows`) and, for many games at once, by the numba twin
    :mod:`allfives_env.batched_engine.facts`.
``heuristic``
    the hand-written ``heuristic`` bot's evaluation terms, one per column (the 17 of
    ``action_features/6``, what the shipped models read): points now, the next seat's
    expected best reply, the chance it cannot play, ... They live with the bots (the
    per-action features of agents/features/), which provide this view through
    :func:`register_action_view` (an ``allfives.action_views`` entry point, so this package
    imports nothing above it).

A view's rows are a ``[140, F]`` float32 array (``F = len(action_view_names(view))``), row
``a`` for action ``a`` (``tile * 5 + end``), zero for every action that is not legal for the
seat (all zero when it is not to act). The AEC env adds them to its observation dict as
``"action_features"``; the flat envs append them flattened: ``[386 + 140 F]`` per game.
:func:`action_view_features` computes them for one seat from its :class:`SeatView` (what a
player sees at play time).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import numpy as np

from allfives_env.game.layout import (
    Layout,
    layout_after,
    layout_points,
    lead_total,
    open_total,
    score_of,
)
from allfives_env.game.tiles import (
    ALL_TILES_MASK,
    END_NAMES,
    IS_DOUBLE,
    N_ACTIONS,
    N_ENDS,
    N_NUMBERS,
    N_TILES,
    OTHER_HALF,
    SUIT_MASK,
    TILE_HIGH,
    TILE_LOW,
    TILE_PIPS,
    pips_of,
)
from allfives_env.game.view import SeatView

RAW, FACTS, HEURISTIC = "raw", "facts", "heuristic"
#: The values of the option ``action_view``.
ACTION_VIEWS: tuple[str, ...] = (RAW, FACTS, HEURISTIC)
#: The entry-point group through which packages above this one provide a view.
ENTRY_POINT_GROUP = "allfives.action_views"

_N = tuple(range(N_NUMBERS))
#: The ``facts`` columns: (name, meaning with its scale, upper bound; every lower bound is 0).
FACT_TABLE: tuple[tuple[str, str, float], ...] = (
    ("low", "the tile's low half / 6", 1.0),
    ("high", "the tile's high half / 6", 1.0),
    ("pips", "the tile's pips / 12", 1.0),
    ("double", "1 for a double", 1.0),
    *((f"end_{e}", f"1 when the move plays on end {e}", 1.0) for e in END_NAMES),
    *((f"exposed_{k}", f"1 when the move leaves a {k} open at the end it plays on (a lead: "
       "at both ends)", 1.0) for k in _N),
    ("points", "points the move scores now / 20", 3.0),
    ("open_total", "the open-end total after the move / 60", 2.0),
    ("spinner", "1 when the move makes its double the spinner", 1.0),
    ("opens_arms", "1 when the move opens the spinner's up and down arms", 1.0),
    ("out", "1 when the move empties the hand", 1.0),
    ("win", "1 when the move reaches the target now (win_check: immediate)", 1.0),
    *((f"open_after_{k}", f"open ends showing a {k} after the move / 4", 1.0) for k in _N),
    *((f"held_after_{k}", f"tiles carrying a {k} left in the hand after the move / 7", 1.0)
      for k in _N),
    *((f"unseen_{k}", f"tiles carrying a {k} the seat cannot see (other hands, boneyard) / 7",
       1.0) for k in _N),
    ("rest_tiles", "tiles left in the hand after the move / 10", 2.8),
    ("rest_pips", "pips left in the hand after the move / 60", 2.8),
    ("held_fit", "tiles left in the hand that match an open end after the move / 7", 4.0),
    ("unseen_fit", "tiles the seat cannot see that match an open end after the move / 28",
     1.0),
    ("next_lacks_open", "open ends after the move whose number the next seat is known to "
     "lack / 4", 1.0),
    *((f"total_mod5_{r}", f"1 when the open-end total after the move is {r} modulo 5", 1.0)
      for r in range(5)),
    *((f"reply_scores_{k}", f"1 when some tile played on an open end after the move, leaving a "
       f"{k} there, would score by the layout's arithmetic (any tile, seen or not)", 1.0)
      for k in _N),
    ("held_scoring", "tiles left in the hand that would score on an open end after the move "
     "/ 7", 4.0),
    ("unseen_scoring", "tiles the seat cannot see that would score on an open end after the "
     "move / 7", 4.0),
)
FACT_NAMES: tuple[str, ...] = tuple(name for name, _, _ in FACT_TABLE)
FACT_COLUMN: dict[str, int] = {name: i for i, name in enumerate(FACT_NAMES)}

#: ``scalar(view, out)``: the ``[140, F]`` rows of one :class:`SeatView` into ``out`` (zeroed);
#: ``batched(games, out)``: every game's seat to act into ``out`` ``[B, 140, F]`` (``facts``
#: has none here: the batched engine runs :mod:`allfives_env.batched_engine.facts` itself).
ScalarRows = Callable[[SeatView, np.ndarray], None]
BatchedRows = Callable[[Any, np.ndarray], None]


@dataclasses.dataclass(frozen=True)
class ActionView:
    """One action view: its column names, meanings, bounds and how to compute it."""

    name: str
    names: tuple[str, ...]
    docs: tuple[str, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    scalar: ScalarRows
    batched: BatchedRows | None = None


_VIEWS: dict[str, ActionView] = {}


def check_action_view(value: object) -> str:
    """``value`` when it is one of :data:`ACTION_VIEWS`, else one ValueError line."""
    if not isinstance(value, str) or value not in ACTION_VIEWS:
        raise ValueError(f"action_view={value!r}: allowed values are "
                         f"{', '.join(map(repr, ACTION_VIEWS))}")
    return value


def register_action_view(view: ActionView) -> None:
    """Provide the view ``view.name`` (one of :data:`ACTION_VIEWS`); a package above this one
    does it for ``heuristic``. Registering the same name again replaces it."""
    check_action_view(view.name)
    _VIEWS[view.name] = view


def get_action_view(name: str) -> ActionView | None:
    """The registered view ``name`` (None for ``raw``), loading its entry point if needed;
    one ValueError line when no installed package provides it."""
    check_action_view(name)
    if name == RAW:
        return None
    if name not in _VIEWS:
        for ep in entry_points(group=ENTRY_POINT_GROUP, name=name):
            register_action_view(ep.load())
            break
    if name not in _VIEWS:
        raise ValueError(f"action_view={name!r}: no installed package provides it (the "
                         f"{ENTRY_POINT_GROUP!r} entry point; reinstall the project)")
    return _VIEWS[name]


def action_view_names(view: str) -> tuple[str, ...]:
    """The column names of ``view``'s rows (``()`` for ``raw``): F is their count."""
    spec = get_action_view(view)
    return () if spec is None else spec.names


def action_view_bounds(view: str) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)``, float32 ``[140, F]``: the bounds of ``view``'s rows."""
    spec = get_action_view(view)
    if spec is None:
        return np.zeros((N_ACTIONS, 0), np.float32), np.zeros((N_ACTIONS, 0), np.float32)
    low = np.broadcast_to(np.array(spec.low, np.float32), (N_ACTIONS, len(spec.names)))
    high = np.broadcast_to(np.array(spec.high, np.float32), (N_ACTIONS, len(spec.names)))
    return low.copy(), high.copy()


def action_view_features(view: SeatView, action_view: str,
                         out: np.ndarray | None = None) -> np.ndarray:
    """``[140, F]`` float32: the rows of ``action_view`` for the seat of ``view`` (zero rows
    for the actions it cannot play now; all zero when it is not to act)."""
    spec = get_action_view(action_view)
    width = 0 if spec is None else len(spec.names)
    if out is None:
        out = np.zeros((N_ACTIONS, width), dtype=np.float32)
    else:
        out[:] = 0.0
    if spec is not None and view.legal:
        spec.scalar(view, out)
    return out


def flat_bounds(obs_low: np.ndarray, obs_high: np.ndarray, view: str
                ) -> tuple[np.ndarray, np.ndarray]:
    """The bounds of a flat observation: ``obs_low/high`` followed by the view's, flattened."""
    low, high = action_view_bounds(view)
    return np.concatenate([obs_low, low.ravel()]), np.concatenate([obs_high, high.ravel()])


# ---------------------------------------------------------------------- the facts view
def facts_rows(view: SeatView, out: np.ndarray) -> None:
    """The ``facts`` rows of the legal actions of ``view`` into ``out`` ``[140, 62]`` (other
    rows left as they are)."""
    unseen = view.unseen
    seen = _Seen(view, unseen, [(unseen & SUIT_MASK[k]).bit_count() / 7.0 for k in _N])
    out[list(view.legal)] = [_fact_row(seen, a) for a in view.legal]


class _Seen:
    """What every row of one seat's view shares."""

    def __init__(self, view: SeatView, unseen: int, unseen_n: list[float]) -> None:
        self.view, self.unseen, self.unseen_n = view, unseen, unseen_n
        self.lacks_next = view.lacks[(view.seat + 1) % view.n]
        self.spin_rule = view.rules.spinner
        self.hand_pips = pips_of(view.hand)
        self.win_at = view.target - view.scores[view.side] if view.rules.immediate_win else None


def _fact_row(seen: _Seen, a: int) -> list[float]:
    """The ``facts`` row of action ``a``, in :data:`FACT_NAMES`' order."""
    view = seen.view
    t, end = divmod(a, N_ENDS)
    ends, exposed, open_after = [0.0] * N_ENDS, [0.0] * N_NUMBERS, [0.0] * N_NUMBERS
    ends[end] = 1.0
    after = layout_after(view, a, seen.spin_rule)
    if end == 0:
        exposed[TILE_LOW[t]] = exposed[TILE_HIGH[t]] = 1.0
        total = lead_total(t)
    else:
        exposed[OTHER_HALF[t * N_NUMBERS + view.ends[end - 1]]] = 1.0
        total = open_total(after.ends, after.dbl, after.cnt, after.n_arms)
    points = score_of(total)
    rest = view.hand & ~(1 << t)
    scoring, reply = _scoring_replies(after)
    fit, lacked = 0, 0
    for i in range(after.n_arms):
        e = after.ends[i]
        open_after[e] += 0.25
        fit |= SUIT_MASK[e]
        lacked += seen.lacks_next >> e & 1
    return [
        TILE_LOW[t] / 6.0, TILE_HIGH[t] / 6.0, TILE_PIPS[t] / 12.0, float(IS_DOUBLE[t]),
        *ends, *exposed, points / 20.0, total / 60.0,
        float(IS_DOUBLE[t] and seen.spin_rule and view.spinner < 0),
        float(view.n_arms < 4 and after.n_arms == 4), float(rest == 0),
        float(seen.win_at is not None and points >= seen.win_at),
        *open_after, *[(rest & SUIT_MASK[k]).bit_count() / 7.0 for k in _N], *seen.unseen_n,
        rest.bit_count() / 10.0, (seen.hand_pips - TILE_PIPS[t]) / 60.0,
        (rest & fit).bit_count() / 7.0, (seen.unseen & fit & ALL_TILES_MASK).bit_count() / 28.0,
        lacked / 4.0, *[float(total % 5 == r) for r in range(5)], *reply,
        (rest & scoring).bit_count() / 7.0, (seen.unseen & scoring).bit_count() / 7.0,
    ]


def _scoring_replies(after: Layout) -> tuple[int, list[float]]:
    """``(tiles, reply)``: the mask of tiles that would score played on some open end of
    ``after``, and per number k whether one of them leaves a k there."""
    scoring, reply = 0, [0.0] * N_NUMBERS
    for j in range(after.n_arms):
        e = after.ends[j]
        for t2 in range(N_TILES):
            if SUIT_MASK[e] >> t2 & 1 and layout_points(
                    after.ends, after.dbl, after.cnt, after.n_arms, t2 * N_ENDS + j + 1):
                scoring |= 1 << t2
                reply[OTHER_HALF[t2 * N_NUMBERS + e]] = 1.0
    return scoring, reply


register_action_view(ActionView(
    FACTS, FACT_NAMES, tuple(doc for _, doc, _ in FACT_TABLE), (0.0,) * len(FACT_TABLE),
    tuple(high for _, _, high in FACT_TABLE), facts_rows))  # batched: batched_facts
