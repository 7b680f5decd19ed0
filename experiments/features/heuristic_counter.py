"""Is the second ply worth anything? (issue 11; experiments/log.md, "The counter feature")

``heuristic`` plus ``w2`` x the ``counter`` feature's points (allfives_agents.features.action_features.counter:
what the seat after the next can expect to score once the next seat has replied; in 2 seats
the mover's own best follow-up), registered as the agent ``heuristic_counter`` and played
with ``allfives eval``'s own code. Run from the repository root:

    PYTHONPATH=. python experiments/features/heuristic_counter.py \\
        --agents heuristic_counter:w2=0.6,keep=0 heuristic --games 2000 --seed 77

``w2=0`` with the heuristic's own weights is ``heuristic`` itself (50.0% against it).
"""

from __future__ import annotations

import sys
from typing import Any

from allfives.cli import main
from allfives_agents.base import Agent, Obs, register
from allfives_agents.features.action_features import FeatureContext, plies
from allfives_agents.options import numeric_options
from allfives_agents.rulebased.heuristic import DEFAULTS
from allfives_agents.rulebased.heuristic import evaluate as heuristic_value
from allfives_env.game.layout import Layout, layout_after
from allfives_env.game.tiles import N_ENDS
from allfives_env.game.view import SeatView


@register("heuristic_counter")
class HeuristicCounter(Agent):
    """``heuristic`` + ``w2`` x counter (options: ``w2`` and the heuristic's weights)."""

    needs_obs = False
    agent_id = "heuristic_counter"  # in option errors

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        super().__init__(seed)
        self.w2 = float(options.pop("w2", 0.6))
        self.weights = numeric_options(self.agent_id, options, DEFAULTS)

    def follow_up(self, ctx: FeatureContext, layout: Layout, rest: int) -> float:
        """The terms past the heuristic's one ply for a move to ``layout`` keeping ``rest``."""
        return self.w2 * ctx.sign2 * plies(ctx, layout, rest, deeper=False)[0]

    def looks_past(self) -> bool:
        """Whether :meth:`follow_up` can be non-zero (else the layout is not built)."""
        return bool(self.w2)

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
            if rest and self.looks_past():
                value += self.follow_up(ctx, layout_after(view, a, view.rules.spinner), rest)
            if value > best_value + 1e-9:
                best, best_value = a, value
        return best


if __name__ == "__main__":  # allfives eval itself, with the agent above registered
    raise SystemExit(main(["eval", *sys.argv[1:]]))
