"""Is the draw after a block worth anything? (issue 11; experiments/log.md, "The reward, and
the draw after a block (fifteenth session)")

A seat with no tile that fits draws until one fits and must play it at once. Given that the
next seat is blocked, every fitting unseen tile is in the boneyard, so the tile it ends up
playing is equally likely to be any of them. ``draw_reply`` = P(the next seat has no play) x
the mean best score of the fitting unseen tiles (0 when nothing can be drawn), signed as
``reply``; no per-action feature has it. ``heuristic_draw`` is ``heuristic`` (or, with
``w2``, ``heuristic_counter``) plus ``wd`` x ``draw_reply``, played with ``allfives eval``'s
own code. Run from the repository root:

    PYTHONPATH=. python experiments/features/heuristic_draw.py \\
        --agents heuristic_draw:wd=0.8 heuristic --games 2000 --seed 4405
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from heuristic_counter import HeuristicCounter  # noqa: E402

from allfives.cli import main  # noqa: E402
from allfives_agents.base import register  # noqa: E402
from allfives_agents.features.action_features import FeatureContext, forced_draw_mean  # noqa: E402
from allfives_agents.rulebased.heuristic import best_scores, expected_best  # noqa: E402
from allfives_env.game.layout import Layout  # noqa: E402


@register("heuristic_draw")
class HeuristicDraw(HeuristicCounter):
    """``heuristic_counter`` (``w2`` 0 unless given) + ``wd`` x draw_reply."""

    agent_id = "heuristic_draw"

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        self.wd = float(options.pop("wd", 0.8))
        options.setdefault("w2", 0.0)
        super().__init__(seed, **options)

    def follow_up(self, ctx: FeatureContext, layout: Layout, rest: int) -> float:
        value = super().follow_up(ctx, layout, rest) if self.w2 else 0.0
        mean = forced_draw_mean(ctx.view, layout)
        if mean is None:
            return value
        _, p_none = expected_best(best_scores(layout, ctx.allowed), ctx.q)
        return value + self.wd * ctx.sign * p_none * mean

    def looks_past(self) -> bool:
        return True


if __name__ == "__main__":  # allfives eval itself, with the agent above registered
    raise SystemExit(main(["eval", *sys.argv[1:]]))
