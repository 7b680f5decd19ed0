"""Is a third ply worth anything? (issue 11; docs/strength.md, "A third ply")

``heuristic`` plus ``w2`` x ``counter`` (the mover's best follow-up after the next seat's
reply) minus ``w3`` x ``ply3``: the next seat's expected best reply after that follow-up,
2 seats only. Registered as ``heuristic_ply3`` and played with ``allfives eval``'s code:

    PYTHONPATH=. python results/features/heuristic_ply3.py \\
        --agents heuristic_ply3:w2=0.6,keep=0,w3=0.4 heuristic_ply3:w2=0.6,keep=0,w3=0 \\
        --games 2000 --seed 77
"""

from __future__ import annotations

import argparse
from typing import Any

from agents import evaluate
from agents.action_features import FeatureContext, counter, replies
from agents.base import Agent, Obs, register
from agents.heuristic import DEFAULTS, best_scores, expected_best, numeric_options
from agents.heuristic import evaluate as heuristic_value
from allfives_env.layout import Layout, layout_after
from allfives_env.tiles import N_ENDS
from allfives_env.view import SeatView


def ply3(ctx: FeatureContext, layout: Layout, rest: int) -> float:
    """The next seat's expected best score after its reply and the mover's best follow-up
    (2 seats: the mover's hand ``rest`` is known); unsigned points."""
    spin, q = ctx.view.rules.spinner, ctx.q

    def third(after: Layout, opp: int) -> float:
        mine = replies(after, rest)
        if mine:
            t = mine[0][1] // N_ENDS
            if not rest & ~(1 << t):
                return 0.0
            after = layout_after(after, mine[0][1], spin)
        return expected_best(best_scores(after, opp), q)[0]

    value, none = 0.0, 1.0
    for _points, a in replies(layout, ctx.allowed):
        opp = ctx.allowed & ~(1 << (a // N_ENDS))
        value += none * q * third(layout_after(layout, a, spin), opp)
        none *= 1.0 - q
    return value + none * third(layout, ctx.allowed)


@register("heuristic_ply3")
class HeuristicPly3(Agent):
    """``heuristic`` + ``w2`` x counter - ``w3`` x ply3 (2 seats)."""

    needs_obs = False

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        super().__init__(seed)
        self.w2 = float(options.pop("w2", 0.6))
        self.w3 = float(options.pop("w3", 0.0))
        self.weights = numeric_options("heuristic_ply3", options, DEFAULTS)

    def act(self, obs: Obs, view: SeatView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        ctx = FeatureContext(view)
        best, best_value = legal[0], float("-inf")
        for a in legal:
            if view.rules.immediate_win and \
                    view.scores[view.side] + view.points_if(a) >= view.target:
                return a
            value = heuristic_value(ctx, a, self.weights)
            rest = view.hand & ~(1 << (a // N_ENDS))
            if rest:
                layout = layout_after(view, a, view.rules.spinner)
                value += self.w2 * ctx.sign2 * counter(ctx, layout, rest)
                if self.w3:
                    value += self.w3 * ctx.sign * ply3(ctx, layout, rest)
            if value > best_value + 1e-9:
                best, best_value = a, value
        return best


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    evaluate.add_arguments(parser)
    raise SystemExit(evaluate.run(parser.parse_args()))
