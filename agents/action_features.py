"""Per-action features: for every legal action of the seat to act, the terms of the one-ply
``heuristic`` evaluation (:func:`agents.heuristic.evaluate`), read from its :class:`SeatView`.

``action_features(view)`` is a ``[140, K]`` float32 array (zero rows for illegal actions);
the columns are :data:`FEATURES`:

* ``points``: points the move scores now / 20;
* ``reply``: the next seat's expected best reply on the new layout / 20, signed (+ partner,
  - opponent), as in the heuristic (each unseen tile it could hold is held with probability
  ``hand size / tiles it could hold``);
* ``no_reply``: the probability that the next seat has no play, signed the same way;
* ``pips``: the tile's pips / 12; ``double``: 1 for a double;
* ``variety``: the numbers left in the hand after the move / 7;
* ``keep``: the best score the rest of the hand could make next on the new layout / 20;
* ``out``: 1 when the move empties the hand (then ``reply``, ``no_reply``, ``variety`` and
  ``keep`` are 0: the hand ends, as the heuristic's 1000 + points says);
* ``win``: 1 when the move reaches the target now under ``win_check: immediate``.

The batched twin (``agents.batched_features``) computes the same numbers for many games at
once; the tests check they are equal. :data:`HEURISTIC_WEIGHTS` gives the weights under
which ``F @ w`` is the heuristic's value in points (with a large bonus for ``out`` and
``win``), used to start a network at the heuristic.
"""

from __future__ import annotations

import numpy as np

from agents.heuristic import (
    DEFAULTS,
    Context,
    best_scores,
    expected_best,
    numbers_in,
)
from allfives_env.layout import layout_after
from allfives_env.tiles import IS_DOUBLE, N_ACTIONS, N_ENDS, TILE_PIPS
from allfives_env.view import SeatView

FEATURE_VERSION = "action_features/1"
FEATURES = ("points", "reply", "no_reply", "pips", "double", "variety", "keep", "out", "win")
N_FEATURES = len(FEATURES)
OUT_BONUS, WIN_BONUS = 50.0, 100.0


def heuristic_weights(w: dict[str, float] | None = None) -> np.ndarray:
    """[K] weights so that ``features @ weights`` is the heuristic value in points
    (``out`` and ``win`` get a bonus of :data:`OUT_BONUS` and :data:`WIN_BONUS` points)."""
    w = dict(DEFAULTS if w is None else w)
    return np.array([20.0, 20.0 * w["reply"], -w["block"], 12.0 * w["pips"], w["double"],
                     7.0 * w["variety"], 20.0 * w["keep"], OUT_BONUS, WIN_BONUS],
                    dtype=np.float32)


HEURISTIC_WEIGHTS = heuristic_weights()


def feature_row(ctx: Context, action: int, win_now: bool, out: np.ndarray) -> None:
    """The features of ``action`` into ``out`` ([K] float32)."""
    view = ctx.view
    t = action // N_ENDS
    now = view.points_if(action)
    hand = view.hand & ~(1 << t)
    out[:] = 0.0
    out[0] = now / 20.0
    out[3] = TILE_PIPS[t] / 12.0
    out[4] = float(IS_DOUBLE[t])
    out[8] = 1.0 if win_now else 0.0
    if not hand:
        out[7] = 1.0
        return
    layout = layout_after(view, action, view.rules.spinner)
    exp_reply, p_none = expected_best(best_scores(layout, ctx.allowed), ctx.q)
    out[1] = ctx.sign * exp_reply / 20.0
    out[2] = ctx.sign * p_none
    out[5] = numbers_in(hand) / 7.0
    out[6] = max(best_scores(layout, hand), default=0) / 20.0


def action_features(view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
    """``[140, K]`` float32 features of the legal actions of ``view`` (see the module)."""
    if out is None:
        out = np.zeros((N_ACTIONS, N_FEATURES), dtype=np.float32)
    else:
        out[:] = 0.0
    if not view.legal:
        return out
    ctx = Context(view)
    immediate = view.rules.win_check == "immediate"
    mine = view.scores[view.side]
    row = np.zeros(N_FEATURES, dtype=np.float64)
    for a in view.legal:
        win_now = immediate and mine + view.points_if(a) >= view.target
        feature_row(ctx, a, win_now, row)
        out[a] = row
    return out


def policy_input(policy: object, obs: np.ndarray, view: SeatView) -> np.ndarray:
    """``obs``, followed by the flattened features when ``policy`` needs them."""
    if not getattr(policy, "needs_features", False):
        return obs
    return np.concatenate([np.asarray(obs, np.float32), action_features(view).ravel()])
