"""The end of a hand, solved: exact values of the moves once few tiles are left to draw.

(issue 11; experiments/log.md, "The end of a hand, solved (fourteenth session)".)

:func:`move_values` gives, for the seat to act, each legal move's value in points: its side's
score change minus the other side's until the hand ends (the pips left in hand at the end
included, as the rules count them), plus :data:`WIN` when the move leads to winning the game
within the hand (minus when losing it), with both seats playing perfectly on a world that
is known. With nothing left to draw in 2 seats the world is known exactly (the unseen tiles
are the other hand); with a few tiles left, the values are averaged over ``worlds`` worlds
sampled from the seat's own view (perfect-information Monte Carlo: each world's draws are
fixed by its sampled boneyard order).

A teacher for the network (``label.py``) and a probe (``probe.py``), never a player: the
network plays alone.
"""

from __future__ import annotations

import numpy as np

from allfives_env.game.engine import GameState
from allfives_env.game.view import SeatView

WIN = 250.0  # Deep Monte-Carlo's reward: a game is worth 1, a point 1/250


def _key(s: GameState) -> tuple:
    return (tuple(s.hands), tuple(s.ends), tuple(s.dbl), tuple(s.cnt), s.n_arms, s.spinner,
            s.spin_wait, s.bone_pos, s.current, tuple(s.scores))


def _margin(state: GameState, side: int) -> int:
    """``side``'s score minus the other side's (two sides)."""
    return 2 * state.scores[side] - sum(state.scores)


EXACT, LOWER, UPPER = 0, 1, 2


class TooBig(Exception):
    """The search passed its budget of positions."""


class Table(dict):
    """The transposition table: state key -> (value, EXACT / LOWER / UPPER), and the number
    of positions the search may store before it gives up (:class:`TooBig`)."""

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.budget = budget


def _child(state: GameState, action: int) -> tuple[GameState, float, bool]:
    """The state after ``action``, the gain of the mover's side, and whether the hand ended
    (the gain then includes :data:`WIN` for a game won or lost)."""
    side = state.side[state.current]
    child = state.copy()
    child.apply(action)
    gain = float(_margin(child, side) - _margin(state, side))
    if child.hand_over and child.game_over and child.winner is not None:
        gain += WIN if child.winner == side else -WIN
    return child, gain, child.hand_over


def _value(state: GameState, action: int, alpha: float, beta: float, memo: Table) -> float:
    """The value of ``action`` for the mover's side, exact when inside (alpha, beta)."""
    child, gain, over = _child(state, action)
    if over:
        return gain
    if child.side[child.current] == state.side[state.current]:
        return gain + _best(child, alpha - gain, beta - gain, memo)
    return gain - _best(child, gain - beta, gain - alpha, memo)


def _best(state: GameState, alpha: float, beta: float, memo: Table) -> float:
    """Negamax with alpha-beta and a table: the best value for the seat to act, in points,
    until the hand ends (exact when inside (alpha, beta), else a bound on the right side)."""
    key = _key(state)
    hit = memo.get(key)
    if hit is not None:
        value, flag = hit
        if flag == EXACT or (flag == LOWER and value >= beta) or (flag == UPPER and value <= alpha):
            return value
    if len(memo) >= memo.budget:
        raise TooBig
    a0, best = alpha, -1e9
    moves = sorted(state.legal_actions(), key=state.points_if, reverse=True)
    for a in moves:
        v = _value(state, a, alpha, beta, memo)
        if v > best:
            best = v
        if best > alpha:
            alpha = best
        if alpha >= beta:
            break
    flag = UPPER if best <= a0 else LOWER if best >= beta else EXACT
    memo[key] = (best, flag)
    return best


def exact_values(state: GameState, moves: list[int], budget: int = 1 << 30) -> list[float]:
    """Each move's exact value in ``state``, every tile known (:class:`TooBig` past
    ``budget`` positions searched)."""
    memo = Table(budget)
    return [_value(state, a, -1e9, 1e9, memo) for a in moves]


def move_values(view: SeatView, moves: list[int], worlds: int, rng: np.random.Generator,
                budget: int = 1 << 30) -> list[float] | None:
    """Each move's value for ``view``'s seat, averaged over sampled worlds (one when nothing is
    hidden but the other hand in 2 seats); None when a world passes ``budget`` positions."""
    known = view.n == 2 and view.boneyard_size == 0
    n = 1 if known else worlds
    total = np.zeros(len(moves))
    for _ in range(n):
        try:
            total += exact_values(view.sample_state(rng), moves, budget)
        except TooBig:
            return None
    return (total / n).tolist()
