"""Test helper: mid-hand game states reached by random legal play."""

from __future__ import annotations

import numpy as np

from allfives_env.game.engine import GameState
from allfives_env.game.rules import Rules


def random_states(rules_list: list[Rules], n: int, seed: int = 0, max_moves: int = 20
                  ) -> list[GameState]:
    """Up to ``n`` states (rules taken in turn), each after 0..max_moves-1 random moves,
    keeping those still mid-hand."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        g = GameState(rules_list[k % len(rules_list)], int(rng.integers(1 << 30)), log=False)
        for _ in range(int(rng.integers(0, max_moves))):
            if g.hand_over:
                break
            legal = g.legal_actions()
            g.apply(legal[int(rng.integers(len(legal)))])
        if not g.hand_over:
            out.append(g)
    return out
