"""``heuristic``: a one-ply evaluation of every legal move from what the seat may see.

A move's value is, in points (weights are options of the id, e.g. ``heuristic:reply=0.8``):

* ``points`` it scores now; a move that reaches the target wins and is taken at once;
* minus ``reply`` x what the next seat can expect to score in reply (plus when that seat is a
  partner). Each unseen tile the next seat could hold (it is not known to lack either
  number) is in its hand with probability ``hand size / tiles it could hold``; the expected
  best reply is taken over those tiles as if they were independent;
* plus ``block`` x the chance that the next seat has no play at all (it must draw or pass);
* plus ``pips`` x the pips the tile takes out of the hand, ``double`` for a double, and
  ``variety`` x the numbers still in hand afterwards (fewer draws later);
* plus ``keep`` x the best score the rest of the hand could make on the new layout.

A move that empties the hand is always taken (the most points among such moves). Defaults
were tuned by duplicate matches (see docs/bots-and-eval.md).
"""

from __future__ import annotations

from typing import Any

from allfives_agents.base import Agent, Obs, register
from allfives_agents.options import numeric_options
from allfives_env.game.layout import Layout, layout_after
from allfives_env.game.tiles import IS_DOUBLE, N_ENDS, N_NUMBERS, OTHER_HALF, SUIT_MASK, TILE_PIPS
from allfives_env.game.view import SeatView

DEFAULTS: dict[str, float] = {
    "reply": 0.8, "block": 10.0, "pips": 0.2, "double": 4.0, "variety": 1.0, "keep": 0.2,
}


def scores_by_tile(layout: Layout, tiles: int) -> dict[int, int]:
    """For each tile of ``tiles`` that matches an open end: tile -> its best score on
    ``layout`` (``layout_points`` of its best end, with the other arms' total summed once)."""
    ends, dbl, cnt, n_arms = layout.ends, layout.dbl, layout.cnt, layout.n_arms
    counted = [ends[j] * (1 + dbl[j]) if j < 2 or cnt[j] else 0 for j in range(n_arms)]
    total = sum(counted)
    best: dict[int, int] = {}
    for i in range(n_arms):
        m = tiles & SUIT_MASK[ends[i]]
        rest, row = total - counted[i], ends[i]
        while m:
            low = m & -m
            t = low.bit_length() - 1
            m ^= low
            p = rest + OTHER_HALF[t * N_NUMBERS + row] * (2 if IS_DOUBLE[t] else 1)
            p = p if p > 0 and p % 5 == 0 else 0
            if p >= best.get(t, -1):
                best[t] = p
    return best


def best_scores(layout: Layout, tiles: int) -> list[int]:
    """For each tile of ``tiles`` that matches an open end, its best score on ``layout``."""
    return list(scores_by_tile(layout, tiles).values())


def expected_best(scores: list[int], q: float) -> tuple[float, float]:
    """E[max score] and P(no playable tile) when each tile is held with probability ``q``."""
    if q >= 1.0:
        return (float(max(scores)), 0.0) if scores else (0.0, 1.0)
    exp, none = 0.0, 1.0
    for p in sorted(scores, reverse=True):
        exp += p * none * q
        none *= 1.0 - q
    return exp, none


def lacks_mask(lacks: int) -> int:
    """The tiles carrying a number in the 7-bit set ``lacks``."""
    m = 0
    for k in range(N_NUMBERS):
        if lacks >> k & 1:
            m |= SUIT_MASK[k]
    return m


def numbers_in(mask: int) -> int:
    """How many different numbers the tiles of ``mask`` carry."""
    return sum(1 for k in range(N_NUMBERS) if mask & SUIT_MASK[k])


class Context:
    """Per-decision facts shared by the evaluation of every legal move."""

    def __init__(self, view: SeatView) -> None:
        self.view = view
        self.unseen = view.unseen
        nxt = (view.seat + 1) % view.n
        self.next_seat = nxt
        self.allowed, self.q, self.sign = holding_odds(view, self.unseen, nxt)


def holding_odds(view: SeatView, unseen: int, seat: int) -> tuple[int, float, float]:
    """What ``view``'s seat may reckon of ``seat``'s hand: the tiles of ``unseen`` it may
    hold (not known to lack), the chance it holds each (its hand size over their count), and
    +1 when it is on the viewer's side, -1 when not."""
    allowed = unseen & ~lacks_mask(view.lacks[seat])
    n_allowed = allowed.bit_count()
    q = min(1.0, view.hand_sizes[seat] / n_allowed) if n_allowed else 0.0
    return allowed, q, 1.0 if view.rules.side_of(seat) == view.side else -1.0


def evaluate(ctx: Context, action: int, w: dict[str, float]) -> float:
    """The heuristic value of ``action`` (see the module docstring)."""
    view = ctx.view
    t = action // N_ENDS
    now = view.points_if(action)
    hand = view.hand & ~(1 << t)
    if not hand:
        return 1000.0 + now  # going out ends the hand in this side's favour
    layout = layout_after(view, action, view.rules.spinner)
    replies = best_scores(layout, ctx.allowed)
    exp_reply, p_none = expected_best(replies, ctx.q)
    mine = best_scores(layout, hand)
    value = now + ctx.sign * w["reply"] * exp_reply - ctx.sign * w["block"] * p_none
    value += w["pips"] * TILE_PIPS[t] + w["double"] * IS_DOUBLE[t]
    value += w["variety"] * numbers_in(hand) + w["keep"] * max(mine, default=0)
    return value


@register("heuristic", batched="allfives_agents.batched.bots:BatchedHeuristic")
class HeuristicAgent(Agent):
    """One-ply evaluation of the legal moves; options: the weights in :data:`DEFAULTS`."""

    needs_obs = False

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        super().__init__(seed)
        self.weights = numeric_options("heuristic", options, DEFAULTS)

    def act(self, obs: Obs, view: SeatView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        my_score = view.scores[view.side]
        best, best_value = legal[0], float("-inf")
        ctx = Context(view)
        for a in legal:
            if view.rules.immediate_win and my_score + view.points_if(a) >= view.target:
                return a
            value = evaluate(ctx, a, self.weights)
            if value > best_value + 1e-9:
                best, best_value = a, value
        return best
