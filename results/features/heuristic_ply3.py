"""Is a third ply worth anything? (issue 11; docs/strength.md, "A third ply")

``heuristic`` plus ``w2`` x ``counter`` (the mover's best follow-up after the next seat's
reply) minus ``w3`` x ``ply3``: the next seat's expected best reply after that follow-up,
2 seats only. Registered as ``heuristic_ply3`` and played with ``allfives eval``'s code:

    PYTHONPATH=. python results/features/heuristic_ply3.py \\
        --agents heuristic_ply3:w2=0.6,keep=0,w3=0.4 heuristic_ply3:w2=0.6,keep=0,w3=0 \\
        --games 2000 --seed 77
"""

from __future__ import annotations

import sys
from typing import Any

from agents.action_features import FeatureContext, replies
from agents.base import register
from agents.heuristic import best_scores, expected_best
from allfives_env.cli import main
from allfives_env.layout import Layout, layout_after
from allfives_env.tiles import N_ENDS
from results.features.heuristic_counter import HeuristicCounter


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
class HeuristicPly3(HeuristicCounter):
    """``heuristic`` + ``w2`` x counter - ``w3`` x ply3 (2 seats)."""

    agent_id = "heuristic_ply3"

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        self.w3 = float(options.pop("w3", 0.0))
        super().__init__(seed, **options)

    def follow_up(self, ctx: FeatureContext, layout: Layout, rest: int) -> float:
        value = super().follow_up(ctx, layout, rest)
        return value + (self.w3 * ctx.sign * ply3(ctx, layout, rest) if self.w3 else 0.0)

    def looks_past(self) -> bool:
        return True


if __name__ == "__main__":  # allfives eval itself, with the agent above registered
    raise SystemExit(main(["eval", *sys.argv[1:]]))
