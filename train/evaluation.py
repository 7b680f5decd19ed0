"""Fast in-process evaluation with duplicate deals, used during training.

Every deal is played once from each side: the learner's side takes each side's seats in turn
while the opponents take the rest, with the same hands dealt to the same seats (hand ``k`` of
deal ``d`` is always the same deal). With teams the learner plays both seats of its team.
The win rate counts a truncated game as half a win; its 95% interval is Wilson's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from allfives_env.engine import Deal, GameState, random_deal
from allfives_env.rules import Rules
from train.opponents import Player


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def duplicate_dealer(rules: Rules, seed: int):  # noqa: ANN201 (a Dealer)
    def dealer(hand_index: int, _rng: np.random.Generator) -> Deal:
        return random_deal(rules, np.random.default_rng([seed, hand_index]))
    return dealer


def play_game(rules: Rules, players: list[Player], seed: int) -> GameState:
    """One game of the duplicate deal ``seed`` (players listed by seat)."""
    state = GameState(rules, seed, dealer=duplicate_dealer(rules, seed), log=False)
    for p in {id(p): p for p in players}.values():
        p.new_game(state)
    while not state.game_over:
        if state.hand_over:
            state.next_hand()
        else:
            state.apply(players[state.current].act(state, state.current))
    return state


def evaluate(rules: Rules, learner: Player, opponent: Player, games: int, seed: int = 0
             ) -> dict[str, Any]:
    """Win rate of ``learner`` against ``opponent`` over ``games`` games (rounded up to whole
    duplicate sets)."""
    n_sides = rules.n_sides
    deals = max(1, math.ceil(games / n_sides))
    wins = draws = 0
    margin = 0.0
    for d in range(deals):
        for side in range(n_sides):
            players = [learner if rules.side_of(s) == side else opponent
                       for s in range(rules.players)]
            state = play_game(rules, players, seed * 1_000_003 + d)
            if state.winner is None:
                draws += 1
            elif state.winner == side:
                wins += 1
            others = [x for i, x in enumerate(state.scores) if i != side]
            margin += state.scores[side] - sum(others) / len(others)
    n = deals * n_sides
    low, high = wilson(wins + 0.5 * draws, n)
    return {"games": n, "wins": wins, "draws": draws, "losses": n - wins - draws,
            "win_rate": (wins + 0.5 * draws) / n, "ci95": [low, high],
            "mean_margin": margin / n}
