"""Is a third ply worth anything? (issue 11; experiments/log.md, "A third ply")

``heuristic`` plus ``w2`` x ``counter`` (the mover's best follow-up after the next seat's
reply) minus ``w3`` x ``ply3``: the next seat's expected best reply after that follow-up,
2 seats only (now the ``ply3`` feature, :func:`allfives_agents.features.action_features.plies`).
Registered as ``heuristic_ply3`` and played with ``allfives eval``'s code:

    PYTHONPATH=. python experiments/features/heuristic_ply3.py \\
        --agents heuristic_ply3:w2=0.6,keep=0,w3=0.4 heuristic_ply3:w2=0.6,keep=0,w3=0 \\
        --games 2000 --seed 77
"""

from __future__ import annotations

import sys
from typing import Any

from allfives.cli import main
from allfives_agents.base import register
from allfives_agents.features.action_features import FeatureContext, plies
from allfives_env.game.layout import Layout
from experiments.features.heuristic_counter import HeuristicCounter


@register("heuristic_ply3")
class HeuristicPly3(HeuristicCounter):
    """``heuristic`` + ``w2`` x counter - ``w3`` x ply3 (2 seats)."""

    agent_id = "heuristic_ply3"

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        self.w3 = float(options.pop("w3", 0.0))
        super().__init__(seed, **options)

    def follow_up(self, ctx: FeatureContext, layout: Layout, rest: int) -> float:
        value = super().follow_up(ctx, layout, rest)
        if not self.w3:
            return value
        return value + self.w3 * ctx.sign * plies(ctx, layout, rest)[1]

    def looks_past(self) -> bool:
        return True


if __name__ == "__main__":  # allfives eval itself, with the agent above registered
    raise SystemExit(main(["eval", *sys.argv[1:]]))
