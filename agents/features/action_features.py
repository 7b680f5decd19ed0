"""Per-action features: for every legal action of the seat to act, terms of the one-ply
``heuristic`` evaluation (:func:`allfives_agents.rulebased.heuristic.evaluate`) and of a few plies
past
it, read from its :class:`SeatView`.

``action_features(view, k)`` is a ``[140, k]`` float32 array (zero rows for illegal
actions): the first ``k`` columns of :data:`REGISTRY`, the table below that declares each
feature once (its name, the feature set that brought it, what it means, how it is computed
for one move, the seat counts where it applies). The feature sets are prefixes of the table:
``action_features/<v>`` reads every feature of version <= v, a count of
:data:`FEATURE_COUNTS`; a policy reads the first ``k`` (its ``feat_b`` has ``k`` entries),
and only those are computed (``counter`` costs a second ply, ``ply3`` and ``can_next`` a
third). :mod:`allfives_agents.features.registry` derives the counts, the policy kinds and the
messages.

Signed terms are + for the mover's side, - for another side; the next seat holds each
unseen tile it could hold with the chance ``hand size / tiles it could hold`` (``q``).

The batched twin (``allfives_agents.batched.features``) computes the same numbers for many games at
once; ``tests/test_feature_registry.py`` checks every registered feature is equal in both.
:data:`HEURISTIC_WEIGHTS` gives the weights under which ``F @ w`` is the heuristic's value
in points (with a large bonus for ``out`` and ``win``), used to start a network at the
heuristic.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from allfives_agents.features.registry import Feature, Registry
from allfives_agents.rulebased.heuristic import (
    DEFAULTS,
    Context,
    best_scores,
    expected_best,
    holding_odds,
    numbers_in,
)
from allfives_env.game.layout import Layout, layout_after, layout_points
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.tiles import (
    IS_DOUBLE,
    N_ACTIONS,
    N_ENDS,
    SUIT_MASK,
    TILE_PIPS,
    mask_to_tiles,
    pips_of,
)
from allfives_env.game.view import SeatView

OUT_BONUS, WIN_BONUS = 50.0, 100.0
TWO = (2,)  # seats=TWO: a feature of 2 seats only (0 with more)

# The per-action features, in column order. Append only: a checkpoint reads a prefix. A
# new feature (or a group added together) takes the next version.
REGISTRY: Registry[Move] = Registry((
    Feature("points", 1, "points the move scores now / 20",
            lambda m: m.now / 20.0, when_out=True, prior=lambda w: 20.0),
    Feature("reply", 1, "the next seat's expected best reply on the new layout / 20, signed",
            lambda m: m.ctx.sign * m.reply[0] / 20.0, prior=lambda w: 20.0 * w["reply"]),
    Feature("no_reply", 1, "the chance the next seat has no play, signed",
            lambda m: m.ctx.sign * m.reply[1], prior=lambda w: -w["block"]),
    Feature("pips", 1, "the tile's pips / 12",
            lambda m: TILE_PIPS[m.tile] / 12.0, when_out=True,
            prior=lambda w: 12.0 * w["pips"]),
    Feature("double", 1, "1 for a double",
            lambda m: float(IS_DOUBLE[m.tile]), when_out=True, prior=lambda w: w["double"]),
    Feature("variety", 1, "the numbers left in the hand after the move / 7",
            lambda m: numbers_in(m.rest) / 7.0, prior=lambda w: 7.0 * w["variety"]),
    Feature("keep", 1, "the best score the rest of the hand could make next on the new "
            "layout / 20", lambda m: max(m.fits, default=0) / 20.0,
            prior=lambda w: 20.0 * w["keep"]),
    Feature("out", 1, "1 when the move empties the hand (the features not computed then "
            "are 0: the hand ends)", lambda m: 1.0 if m.out else 0.0, when_out=True,
            prior=lambda w: OUT_BONUS),
    Feature("win", 1, "1 when the move reaches the target now under win_check: immediate",
            lambda m: 1.0 if m.win else 0.0, when_out=True, prior=lambda w: WIN_BONUS),
    Feature("counter", 2, "a second ply (plies): the best score the seat after the next one "
            "can expect once the next seat has replied / 20, signed by that seat's side; "
            "in 2 seats that seat is the mover, whose rest of the hand is known",
            lambda m: m.ctx.sign2 * m.plies[0] / 20.0),
    Feature("ply3", 3, "a third ply (plies): minus the next seat's expected best score / 20 "
            "after its reply and the mover's best-scoring follow-up (0 when that empties "
            "the hand), its holding reckoned afresh less the tile it replied with",
            lambda m: m.ctx.sign * m.plies[1] / 20.0, seats=TWO),
    Feature("can_next", 3, "the chance the mover has a play once the next seat has "
            "replied (plies)", lambda m: m.plies[2], seats=TWO),
    Feature("other_match", 4, "the number of tiles the next seat can be expected to hold "
            "that match an open end of the new layout / 7, signed: its ways to answer",
            lambda m: m.ctx.sign * m.ctx.q * len(m.answers) / 7.0),
    Feature("draw_reply", 5, "what the next seat scores when it has no play and must draw: "
            "no_reply's chance times the mean best score of the unseen tiles that fit the "
            "new layout / 20, signed (0 when nothing can be drawn; forced_draw_mean)",
            lambda m: m.ctx.sign * m.reply[1] * m.draw_mean / 20.0
            if m.reply[1] and m.draw_mean is not None else 0.0),
    Feature("out_pips", 6, "when the move empties the hand, the pips the next seat can be "
            "expected to hold / 20: what going out is worth, before rounding",
            lambda m: m.ctx.next_pips / 20.0 if m.out else 0.0, seats=TWO, when_out=True),
    Feature("opp_out", 6, "when the next seat holds one tile, the chance it fits the new "
            "layout (a domino) times the pips left in the mover's hand / 20, signed",
            lambda m: m.ctx.sign * (m.ctx.q * len(m.answers)) * pips_of(m.rest) / 20.0
            if m.ctx.next_size == 1 else 0.0, seats=TWO),
    Feature("my_match", 6, "the number of tiles left in the mover's hand that match an "
            "open end of the new layout / 7: its ways to play on",
            lambda m: len(m.fits) / 7.0),
))
FEATURES = REGISTRY.names
N_FEATURES = len(FEATURES)
FEATURE_COUNTS = REGISTRY.counts  # the sets a policy may read
BASE_FEATURES = FEATURE_COUNTS[0]  # action_features/1, which a new actor reads
FEATURE_VERSION = REGISTRY.kind(REGISTRY.latest)


def heuristic_weights(w: dict[str, float] | None = None) -> np.ndarray:
    """[N_FEATURES] weights so that ``features @ weights`` is the heuristic value in points
    (``out`` and ``win`` get a bonus of :data:`OUT_BONUS` and :data:`WIN_BONUS` points)."""
    return np.array(REGISTRY.priors(dict(DEFAULTS if w is None else w)), dtype=np.float32)


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
    """:class:`Context` plus what the features past one ply need: the seat after the next
    one (``counter``), the scores, and which of the first ``k`` features apply here."""

    sign2: float  # the side of the seat after the next one: +1 the mover's, else -1
    next_size: int  # the next seat's hand size

    def __init__(self, view: SeatView, k: int = N_FEATURES) -> None:
        super().__init__(view)
        self.second = (view.seat + 2) % view.n
        self.allowed2, self.q2, self.sign2 = holding_odds(view, self.unseen, self.second)
        self.next_size = view.hand_sizes[self.next_seat]
        self.immediate = view.rules.immediate_win
        self.mine = view.scores[view.side]
        self.row = REGISTRY.scalars(k, view.n)  # a move's functions, column by column
        self.out_row = REGISTRY.scalars(k, view.n, out=True)  # a move that goes out
        self.deeper = self.asks("ply3") or self.asks("can_next")  # plies' third ply

    def asks(self, name: str) -> bool:
        """Whether feature ``name`` is computed here (asked for, and for this seat count)."""
        col = REGISTRY.column[name]
        return col < len(self.row) and self.row[col] is REGISTRY.features[col].scalar

    @cached_property
    def next_pips(self) -> float:
        """The pips the next seat can be expected to hold (``out_pips``)."""
        return self.q * pips_of(self.allowed)


def forced_draw_mean(view: SeatView, layout: Layout) -> float | None:
    """The mean best score on ``layout`` of the tiles ``view``'s seat cannot see that fit it:
    what a seat with no play on ``layout`` scores on average with the tile it draws and must
    play (``draw_reply``). None when nothing can be drawn or no unseen tile fits. A seat with
    no play draws until a tile fits and must play it at once; given that it had none, every
    fitting unseen tile is in the boneyard (in 2 seats; with more some may sit in other
    hands), so the tile it ends up playing is equally likely to be any of them."""
    if not view.drawable:
        return None
    fit = best_scores(layout, view.unseen)
    return sum(fit) / len(fit) if fit else None


class Move:
    """One legal action of the seat to act, as the features' scalar functions see it: what
    they share, computed once. A move that keeps tiles has the layout after it, the next
    seat's replies on it and the rest of the hand's fits (every feature set reads them), and
    the plies and the forced draw when a feature first asks; a move that empties the hand
    has only what ``when_out`` features read (the tile, the points, ``win``)."""

    __slots__ = ("ctx", "action", "tile", "now", "rest", "out", "win", "layout", "answers",
                 "reply", "fits", "_plies", "_draw_mean", "_drawn")
    ctx: FeatureContext
    action: int
    tile: int
    now: int  # the points it scores
    rest: int  # the hand after it
    out: bool  # it empties the hand
    win: bool  # it reaches the target now under win_check: immediate
    layout: Layout  # the layout after it
    answers: list[int]  # the best score of each tile the next seat could hold that fits
    reply: tuple[float, float]  # the next seat's expected best reply, the chance of none
    fits: list[int]  # the best score of each tile of the rest of the hand

    def __init__(self, ctx: FeatureContext, action: int) -> None:
        view = ctx.view
        self.ctx = ctx
        self.action = action
        self.tile = action // N_ENDS
        self.now = view.points_if(action)
        self.rest = view.hand & ~(1 << self.tile)
        self.out = not self.rest
        self.win = ctx.immediate and ctx.mine + self.now >= view.target
        if self.out:
            return
        self.layout = layout_after(view, action, view.rules.spinner)
        self.answers = best_scores(self.layout, ctx.allowed)
        self.reply = expected_best(self.answers, ctx.q)
        self.fits = best_scores(self.layout, self.rest)
        self._plies: tuple[float, float, float] | None = None
        self._draw_mean: float | None = None
        self._drawn = False

    @property
    def plies(self) -> tuple[float, float, float]:
        """:func:`plies` on the new layout: (counter, ply3, can_next), unsigned points."""
        if self._plies is None:
            self._plies = plies(self.ctx, self.layout, self.rest, self.ctx.deeper)
        return self._plies

    @property
    def draw_mean(self) -> float | None:
        """:func:`forced_draw_mean` on the new layout."""
        if not self._drawn:
            self._draw_mean, self._drawn = forced_draw_mean(self.ctx.view, self.layout), True
        return self._draw_mean


def feature_row(ctx: FeatureContext, action: int) -> list[float]:
    """The features of ``action`` (the first ``k`` of ``ctx``; 0 where one does not apply)."""
    m = Move(ctx, action)
    return [f(m) for f in (ctx.out_row if m.out else ctx.row)]


def action_features(view: SeatView, k: int = N_FEATURES,
                    out: np.ndarray | None = None) -> np.ndarray:
    """``[140, k]`` float32: the first ``k`` features of the legal actions of ``view`` (see
    the module)."""
    REGISTRY.check_count(k)
    if out is None:
        out = np.zeros((N_ACTIONS, k), dtype=np.float32)
    else:
        out[:] = 0.0
    if not view.legal:
        return out
    ctx = FeatureContext(view, k)
    for a in view.legal:
        out[a] = feature_row(ctx, a)
    return out


def policy_input(policy: object, obs: np.ndarray, view: SeatView) -> np.ndarray:
    """``obs``, followed by the flattened features ``policy`` reads (its ``n_features``), or
    the rows of the action view it reads (its ``action_view``,
    :mod:`allfives_agents.trained.policy_numpy`)."""
    action_view = getattr(policy, "action_view", None)
    if action_view:
        from allfives_env.envs.action_views import action_view_features

        rows = action_view_features(view, action_view).ravel()
        return np.concatenate([np.asarray(obs, np.float32)[:OBS_SIZE], rows])
    if not getattr(policy, "needs_features", False):
        return obs
    k = int(policy.n_features)  # type: ignore[attr-defined]
    return np.concatenate([np.asarray(obs, np.float32), action_features(view, k).ravel()])
