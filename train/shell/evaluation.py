"""Evaluation during training: the learner against fixed opponents on duplicate deals.

The same duplicate scheme and game loop as ``allfives eval``
(:func:`allfives_agents.evaluation.evaluate.play_deal`,
:func:`allfives_env.game.match.seatings`): every deal is played once per seating, the learner as
entry 0 and the opponent as entry 1, with the same hands dealt to the same seats. With teams
the learner plays both seats of its team. A drawn (truncated) game counts as half a win; the
95% interval is Wilson's (:func:`allfives_agents.evaluation.stats.wilson`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from allfives_agents.base import Agent
from allfives_agents.evaluation.evaluate import play_deal
from allfives_agents.evaluation.report import pairing_summary
from allfives_env.game.match import game_seed, seatings
from allfives_env.game.rules import Rules


def evaluate(rules: Rules, learner: Agent, opponent: Agent, games: int, seed: int = 0,
             on_games: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Win rate of ``learner`` against ``opponent`` over ``games`` games (rounded up to whole
    duplicate sets); ``on_games(k)`` after each deal, ``k`` its games."""
    deals = max(1, math.ceil(games / len(seatings(rules))))

    def agent_for(entry: int, _seat: int) -> Agent:
        return learner if entry == 0 else opponent

    outcomes = []
    for d in range(deals):
        played = play_deal(rules, agent_for, (0, 1), d, game_seed(seed, d))
        outcomes.extend(played)
        if on_games is not None:
            on_games(len(played))
    p = pairing_summary(["learner", "opponent"], (0, 1), outcomes)
    margin = sum(o.points[0] - o.points[1] for o in outcomes) / len(outcomes)
    return {"games": p["games"], "wins": p["wins"], "draws": p["draws"],
            "losses": p["losses"], "win_rate": p["win_rate"], "ci95": p["ci95"],
            "mean_margin": margin}
