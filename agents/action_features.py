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
* ``win``: 1 when the move reaches the target now under ``win_check: immediate``;
* ``counter`` (a second ply, :func:`plies`): the best score the seat after the next one can
  expect once the next seat has replied / 20, signed (+ own side, - another side). In 2 seats
  that seat is the mover, whose rest of the hand is known; in 4 in teams, the partner.
* ``ply3`` (a third ply, 2 seats, :func:`plies`; 0 with more seats): minus the next
  seat's expected best score / 20 after its reply (as in ``counter``) and the mover's
  best-scoring follow-up (0 when that follow-up empties the hand); the next seat's holding is
  reckoned afresh from the tiles it could hold, less the one it replied with;
* ``can_next`` (2 seats; 0 with more): the chance the mover has a play once the next seat
  has replied. Like ``counter``, both play on past a reply that would end the hand.
* ``other_match``: the number of tiles the next seat can be expected to hold that match an
  open end of the new layout (each unseen tile it could hold, held with the chance ``reply``
  uses) / 7, signed as ``reply``: how many ways it has to answer.
* ``draw_reply``: what the next seat scores when it has no play and must draw: the chance
  it has no play (``no_reply``'s) times the mean best score of the unseen tiles that fit the
  new layout / 20, signed as ``reply`` (0 when nothing can be drawn). A seat with no play
  draws until a tile fits and must play it at once; given that it had none, every fitting
  unseen tile is in the boneyard (in 2 seats; with more seats some may sit in other hands),
  so the tile it ends up playing is equally likely to be any of them.
* ``out_pips`` (2 seats; 0 with more): when the move empties the hand, the pips the next
  seat can be expected to hold (each tile it could hold, held with the chance ``reply``
  uses) / 20: what going out is worth under the end-of-hand scoring, before rounding.
* ``opp_out`` (2 seats; 0 with more): when the next seat holds one tile, the chance that it
  fits the new layout (the next seat goes out with its reply) times the pips left in the
  mover's hand / 20, signed as ``reply``: what the mover stands to lose to a domino.
* ``my_match``: the number of tiles left in the mover's hand that match an open end of the
  new layout / 7: how many ways it keeps to play on (``keep`` has only the best score).

The feature sets are prefixes of :data:`FEATURES`, of the lengths in :data:`FEATURE_COUNTS`:
``action_features/1`` is the first :data:`BASE_FEATURES` (9), which every checkpoint before
``counter`` reads; ``action_features/2`` the first 10; ``action_features/3`` the first 12;
``action_features/4`` the first 13; ``action_features/5`` the first 14;
``action_features/6`` all 17 (the three end-of-hand terms). A policy
reads the first ``K`` (its ``feat_b`` has ``K`` entries), and ``action_features(view, k)``
computes only those (``counter`` costs a second ply, ``ply3`` and ``can_next`` a third).

The batched twin (``agents.batched_features``) computes the same numbers for many games at
once; the tests check they are equal. :data:`HEURISTIC_WEIGHTS` gives the weights under
which ``F @ w`` is the heuristic's value in points (with a large bonus for ``out`` and
``win``), used to start a network at the heuristic.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from agents.heuristic import (
    DEFAULTS,
    Context,
    best_scores,
    expected_best,
    holding_odds,
    numbers_in,
)
from allfives_env.layout import Layout, layout_after, layout_points
from allfives_env.tiles import (
    IS_DOUBLE,
    N_ACTIONS,
    N_ENDS,
    SUIT_MASK,
    TILE_PIPS,
    mask_to_tiles,
    pips_of,
)
from allfives_env.view import SeatView

FEATURE_VERSION = "action_features/6"
FEATURES = ("points", "reply", "no_reply", "pips", "double", "variety", "keep", "out", "win",
            "counter", "ply3", "can_next", "other_match", "draw_reply", "out_pips", "opp_out",
            "my_match")
N_FEATURES = len(FEATURES)
BASE_FEATURES = 9  # action_features/1: every feature before counter
COUNTER_FEATURES = 10  # action_features/2: counter too
PLY3_FEATURES = 12  # action_features/3: ply3 and can_next too
MATCH_FEATURES = 13  # action_features/4: other_match too
DRAW_FEATURES = 14  # action_features/5: draw_reply too
END_FEATURES = 17  # action_features/6: out_pips, opp_out and my_match too
FEATURE_COUNTS = (BASE_FEATURES, COUNTER_FEATURES, PLY3_FEATURES, MATCH_FEATURES,
                  DRAW_FEATURES, END_FEATURES)  # the sets a policy may read
OUT_BONUS, WIN_BONUS = 50.0, 100.0


def heuristic_weights(w: dict[str, float] | None = None) -> np.ndarray:
    """[K] weights so that ``features @ weights`` is the heuristic value in points
    (``out`` and ``win`` get a bonus of :data:`OUT_BONUS` and :data:`WIN_BONUS` points)."""
    w = dict(DEFAULTS if w is None else w)
    return np.array([20.0, 20.0 * w["reply"], -w["block"], 12.0 * w["pips"], w["double"],
                     7.0 * w["variety"], 20.0 * w["keep"], OUT_BONUS, WIN_BONUS,
                     0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                    dtype=np.float32)


HEURISTIC_WEIGHTS = heuristic_weights()


def replies(layout: Layout, tiles: int) -> list[tuple[int, int]]:
    """The replies a seat holding some of ``tiles`` could make on ``layout``: for each tile
    that matches an open end, (its best score, the action playing it there; on equal scores
    the highest end), ordered by score, high to low, then by tile."""
    best: dict[int, tuple[int, int]] = {}
    for i in range(layout.n_arms):
        for t in mask_to_tiles(tiles & SUIT_MASK[layout.ends[i]]):
            a = t * N_ENDS + i + 1
            p = layout_points(layout.ends, layout.dbl, layout.cnt, layout.n_arms, a)
            if t not in best or p >= best[t][0]:
                best[t] = (p, a)
    return [best[t] for t in sorted(best, key=lambda t: (-best[t][0], t))]


def plies(ctx: FeatureContext, layout: Layout, rest: int,
          deeper: bool = True) -> tuple[float, float, float]:
    """The features past one ply, unsigned points, in one pass over the next seat's replies
    on ``layout`` (the layout after the move; ``rest``: the mover's hand after it). The next
    seat plays its best reply, each tile it could hold held with probability ``ctx.q`` as in
    ``reply``; or, with the chance that it holds none, leaves the layout as it is. Then:

    * ``counter``: the seat after it scores its best: exactly, from ``rest``, when that seat
      is the mover (2 seats); else its expected best over the tiles it could hold, as
      ``reply`` reckons the next seat's;
    * with ``deeper``, 2 seats only (else 0): ``ply3``, the next seat's expected best score
      after the mover's best-scoring follow-up from ``rest`` (0 when that follow-up empties
      the hand), its tiles reckoned afresh less the one it replied with; and ``can_next``,
      the chance the mover has a play once the next seat has replied."""
    view, spin, q = ctx.view, ctx.view.rules.spinner, ctx.q
    mover = ctx.second == view.seat
    deep = deeper and mover

    def then(after: Layout, opp: int) -> tuple[float, float, float]:
        if not deep:
            if mover:
                return float(max(best_scores(after, rest), default=0)), 0.0, 0.0
            return expected_best(best_scores(after, ctx.allowed2), ctx.q2)[0], 0.0, 0.0
        mine = replies(after, rest)
        if not mine:
            return 0.0, expected_best(best_scores(after, opp), q)[0], 0.0
        points, a = mine[0]
        if not rest & ~(1 << (a // N_ENDS)):
            return float(points), 0.0, 1.0
        after = layout_after(after, a, spin)
        return float(points), expected_best(best_scores(after, opp), q)[0], 1.0

    c = p3 = can = 0.0
    none = 1.0
    for _points, a in replies(layout, ctx.allowed):
        x, y, z = then(layout_after(layout, a, spin), ctx.allowed & ~(1 << (a // N_ENDS)))
        c += none * q * x
        p3 += none * q * y
        can += none * q * z
        none *= 1.0 - q
    x, y, z = then(layout, ctx.allowed)
    return c + none * x, p3 + none * y, can + none * z


class FeatureContext(Context):
    """:class:`Context` plus what ``counter`` needs of the seat after the next one."""

    def __init__(self, view: SeatView) -> None:
        super().__init__(view)
        self.second = (view.seat + 2) % view.n
        self.allowed2, self.q2, self.sign2 = holding_odds(view, self.unseen, self.second)
        self.two = view.n == 2
        self.next_size = view.hand_sizes[self.next_seat]

    @cached_property
    def next_pips(self) -> float:
        """The pips the next seat can be expected to hold (``out_pips``)."""
        return self.q * pips_of(self.allowed)


def forced_draw_mean(view: SeatView, layout: Layout) -> float | None:
    """The mean best score on ``layout`` of the tiles ``view``'s seat cannot see that fit it:
    what a seat with no play on ``layout`` scores on average with the tile it draws and must
    play (``draw_reply``). None when nothing can be drawn or no unseen tile fits."""
    if not view.drawable:
        return None
    fit = best_scores(layout, view.unseen)
    return sum(fit) / len(fit) if fit else None


def feature_row(ctx: FeatureContext, action: int, win_now: bool, out: np.ndarray) -> None:
    """The features of ``action`` into ``out`` ([K] float32; ``counter`` when K > 9)."""
    view = ctx.view
    t = action // N_ENDS
    now = view.points_if(action)
    hand = view.hand & ~(1 << t)
    out[:] = 0.0
    out[0] = now / 20.0
    out[3] = TILE_PIPS[t] / 12.0
    out[4] = float(IS_DOUBLE[t])
    out[8] = 1.0 if win_now else 0.0
    ends = len(out) > DRAW_FEATURES
    if not hand:
        out[7] = 1.0
        if ends and ctx.two:
            out[14] = ctx.next_pips / 20.0
        return
    layout = layout_after(view, action, view.rules.spinner)
    answers = best_scores(layout, ctx.allowed)
    exp_reply, p_none = expected_best(answers, ctx.q)
    out[1] = ctx.sign * exp_reply / 20.0
    out[2] = ctx.sign * p_none
    out[5] = numbers_in(hand) / 7.0
    fits = best_scores(layout, hand)
    out[6] = max(fits, default=0) / 20.0
    if len(out) > BASE_FEATURES:
        deeper = len(out) > COUNTER_FEATURES
        c, p3, can = plies(ctx, layout, hand, deeper)
        out[9] = ctx.sign2 * c / 20.0
        if deeper:
            out[10] = ctx.sign * p3 / 20.0
            out[11] = can
    if len(out) > PLY3_FEATURES:
        out[12] = ctx.sign * ctx.q * len(answers) / 7.0
    if len(out) > MATCH_FEATURES and p_none:
        mean = forced_draw_mean(view, layout)
        if mean is not None:
            out[13] = ctx.sign * p_none * mean / 20.0
    if ends:
        if ctx.two and ctx.next_size == 1:
            out[15] = ctx.sign * (ctx.q * len(answers)) * pips_of(hand) / 20.0
        out[16] = len(fits) / 7.0


def action_features(view: SeatView, k: int = N_FEATURES,
                    out: np.ndarray | None = None) -> np.ndarray:
    """``[140, k]`` float32: the first ``k`` features of the legal actions of ``view`` (see
    the module)."""
    if k not in FEATURE_COUNTS:
        raise ValueError(f"action features: {k} asked; a policy reads the first "
                         f"{', '.join(map(str, FEATURE_COUNTS))} of {', '.join(FEATURES)}")
    if out is None:
        out = np.zeros((N_ACTIONS, k), dtype=np.float32)
    else:
        out[:] = 0.0
    if not view.legal:
        return out
    ctx = FeatureContext(view)
    immediate = view.rules.immediate_win
    mine = view.scores[view.side]
    row = np.zeros(k, dtype=np.float64)
    for a in view.legal:
        win_now = immediate and mine + view.points_if(a) >= view.target
        feature_row(ctx, a, win_now, row)
        out[a] = row
    return out


def policy_input(policy: object, obs: np.ndarray, view: SeatView) -> np.ndarray:
    """``obs``, followed by the flattened features ``policy`` reads (its ``n_features``)."""
    if not getattr(policy, "needs_features", False):
        return obs
    k = int(policy.n_features)  # type: ignore[attr-defined]
    return np.concatenate([np.asarray(obs, np.float32), action_features(view, k).ravel()])
