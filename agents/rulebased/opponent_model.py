"""What the next seat's plays say about its hand, for weighting sampled worlds.

Between two decisions of a seat in a 2-seat game the other seat plays one tile (perhaps after
drawing). :class:`PlayMemory` remembers, from the seat's own views only, the layout that
the other seat faced and the points its play scored. A tile that would have scored ``d``
points more than the play it made makes a world in which it holds that tile less likely:
the world's log-weight is ``-beta`` x the sum over remembered plays of the largest such
``d`` among the tiles the world gives it. A play is forgotten when the hand ends or when
that seat draws afterwards (its hand then may have held tiles it holds now or not).
Used by :class:`allfives_agents.planning.netsearch.NetSearchAgent` (option ``infer``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from allfives_agents.rulebased.heuristic import (
    DEFAULTS,
    best_scores,
    expected_best,
    lacks_mask,
    scores_by_tile,
)
from allfives_env.game.layout import Layout, layout_after, layout_points
from allfives_env.game.tiles import IS_DOUBLE, N_ENDS, SUIT_MASK, TILE_PIPS
from allfives_env.game.view import SeatView


def values_by_tile(layout: Layout, tiles: int, replies: int, q: float,
                   spinner: bool) -> dict[int, float]:
    """For each tile of ``tiles`` that fits an open end, its best one-ply ``heuristic``
    value (points, the next seat's expected reply from ``replies`` each held with
    probability ``q``, the chance it cannot reply, pips and doubles shed) on ``layout``."""
    w = DEFAULTS
    best: dict[int, float] = {}
    for i in range(layout.n_arms):
        m = tiles & SUIT_MASK[layout.ends[i]]
        while m:
            low = m & -m
            t = low.bit_length() - 1
            m ^= low
            action = t * N_ENDS + i + 1
            after = layout_after(layout, action, spinner)
            exp_reply, p_none = expected_best(best_scores(after, replies & ~low), q)
            v = float(layout_points(layout.ends, layout.dbl, layout.cnt, layout.n_arms, action))
            v += -w["reply"] * exp_reply + w["block"] * p_none
            v += w["pips"] * TILE_PIPS[t] + w["double"] * IS_DOUBLE[t]
            if v > best.get(t, -1e9):
                best[t] = v
    return best


def draws_of(view: SeatView, seat: int) -> int:
    """How many tiles ``seat`` holds or has played beyond what it was dealt this hand."""
    played = sum(1 for s in view.played_by if s == seat)
    return view.hand_sizes[seat] + played - view.rules.hand_size


MODELS = ("points", "value")


@dataclass
class _Play:
    hand_index: int
    draws: int  # the other seat's draw count when the play was seen
    regrets: list[tuple[int, float]]  # (tile, value it would have had beyond the play)


class PlayMemory:
    """The other seat's plays seen this hand (2 seats; with more, nothing is remembered)."""

    def __init__(self, model: str = "value") -> None:
        if model not in MODELS:
            raise ValueError(f"opponent model {model!r}: models are {', '.join(MODELS)}")
        self.model = model
        self.plays: list[_Play] = []
        self._last: tuple[SeatView, int] | None = None

    def reset(self) -> None:
        self.plays, self._last = [], None

    def see(self, view: SeatView) -> None:
        """Call at every decision, before choosing: learn the other seat's play since the
        last decision, and forget what no longer holds."""
        last, self._last = self._last, None
        if view.n != 2:
            self.plays = []
            return
        other = 1 - view.seat
        if last is not None:
            self._learn(last[0], last[1], view, other)
        draws = draws_of(view, other)
        self.plays = [p for p in self.plays
                      if p.hand_index == view.hand_index and p.draws == draws]

    def chose(self, view: SeatView, action: int) -> None:
        """Call with the move made at this decision."""
        self._last = (view, action)

    def _learn(self, before: SeatView, action: int, now: SeatView, other: int) -> None:
        if now.hand_index != before.hand_index or now.n_played != before.n_played + 2:
            return  # a forced move of ours in between, or a new hand: not one clean play
        new = [t for t, (a, b) in enumerate(zip(before.played_by, now.played_by))
               if a < 0 and b == other]
        if len(new) != 1:
            return
        side = now.rules.side_of(other)
        scored = now.scores[side] - before.scores[side]
        layout = layout_after(before, action, before.rules.spinner)
        could = before.unseen & ~(1 << (action // N_ENDS))
        if self.model == "points":
            regrets = [(t, float(p - scored)) for t, p in scores_by_tile(layout, could).items()
                       if p > scored]
        else:
            me = before.seat
            hand = before.hand & ~(1 << (action // N_ENDS))
            replies = (hand | before.unseen) & ~lacks_mask(now.lacks[me])
            room = replies.bit_count() - now.hand_sizes[other]
            q = min(1.0, now.hand_sizes[me] / room) if room > 0 else 1.0
            values = values_by_tile(layout, could, replies, q, before.rules.spinner)
            chosen = values.get(new[0], float(scored))
            regrets = [(t, v - chosen) for t, v in values.items() if t != new[0]]
        self.plays.append(_Play(now.hand_index, draws_of(now, other), regrets))

    def log_weight(self, hand: int, beta: float) -> float:
        """The log-weight of a world that gives the other seat ``hand``: ``-beta`` x
        :meth:`penalty` (model ``points``), or the log-likelihood of its plays under a
        softmax of ``beta`` x their heuristic values over the tiles it held (``value``)."""
        if self.model == "points":
            return -beta * self.penalty(hand)
        total = 0.0
        for play in self.plays:
            z = 1.0
            for t, d in play.regrets:
                if hand >> t & 1:
                    z += math.exp(beta * d)
            total -= math.log(z)
        return total

    def penalty(self, hand: int) -> float:
        """Sum over remembered plays of the most points a tile of ``hand`` would have added."""
        total = 0.0
        for play in self.plays:
            worst = 0.0
            for t, d in play.regrets:
                if d > worst and hand >> t & 1:
                    worst = d
            total += worst
        return total
