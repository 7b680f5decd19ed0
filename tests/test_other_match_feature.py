"""The ``other_match`` feature (``features: 13``): how many tiles the next seat can be expected
to hold that answer the move. With the boneyard empty in 2 seats the next seat's hand is
known, and it is minus the number of tiles the engine lets that seat play next / 7; a
13-feature run trains, saves as ``action_features/4`` and plays; widening a 12-feature
checkpoint keeps its play."""

from __future__ import annotations

import numpy as np
import pytest
from test_ply3_feature import _endgames, check_a_wider_run

from allfives_agents.features.action_features import FEATURES, action_features
from allfives_env.game.engine import GameState
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ENDS
from allfives_env.game.view import SeatView

COL = FEATURES.index("other_match")


def _answers(state: GameState, action: int) -> int | None:
    """How many tiles of the next seat's hand it may play after ``action``, by the engine;
    None when the move ends the hand."""
    s, mover = state.copy(), state.current
    s.apply(action)
    if s.hand_over:
        return None
    if s.current == mover:  # with the boneyard empty the next seat passed: none answer
        return 0
    return len({a // N_ENDS for a in s.legal_actions()})


def test_with_the_boneyard_empty_it_counts_the_next_seats_answers() -> None:
    checked = nonzero = 0
    for state in _endgames(2, 300):
        view = SeatView.of(state, state.current)
        f = action_features(view)
        for a in view.legal:
            want = _answers(state, a)
            if want is None or not view.hand & ~(1 << (a // N_ENDS)):
                continue
            assert f[a, COL] == pytest.approx(-want / 7.0, abs=1e-6)
            checked += 1
            nonzero += want > 0
    assert checked > 300 and nonzero > 100


def first_moves_column(players: int, teams: bool, col: int, games: int, moves: int
                       ) -> np.ndarray:
    """Feature ``col`` of every legal move over the first ``moves`` moves of ``games``
    all_fives games (seeds 0..games-1, each seat playing its first legal move)."""
    rules = make_rules("all_fives", players=players, teams=teams)
    values = []
    for seed in range(games):
        state = GameState(rules, seed=seed, log=False)
        for _ in range(moves):
            view = SeatView.of(state, state.current)
            values.append(action_features(view)[list(view.legal), col])
            state.apply(view.legal[0])
            if state.hand_over:
                break
    return np.concatenate(values)


@pytest.mark.parametrize("players,teams", [(3, False), (4, True)])
def test_with_more_seats_it_is_signed_by_the_next_seats_side(players: int, teams: bool) -> None:
    """The next seat is an opponent here, so the feature is at most 0, and some moves have
    an answer."""
    v = first_moves_column(players, teams, COL, games=20, moves=4)
    assert (v <= 0).all() and (v < 0).any()


def test_a_thirteen_feature_run_trains_saves_plays_and_widens(tmp_path) -> None:
    check_a_wider_run(tmp_path, 12, 13, "action_features/4")
