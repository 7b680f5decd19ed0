"""The ``draw_reply`` feature (``features: 14``): what the next seat scores when it has no
play and must draw. Given the block, the tile it must play is equally likely to be any
fitting unseen tile (2 seats), so the feature's mean score is checked against the engine's
forced plays in worlds sampled from the mover's view; nothing to draw gives 0; with more
seats it is signed by the next seat's side; a 14-feature run trains, saves as
``action_features/5`` and plays, and widening a 13-feature checkpoint keeps its play."""

from __future__ import annotations

import numpy as np
import pytest
from test_other_match_feature import first_moves_column
from test_ply3_feature import _endgames, check_a_wider_run

from allfives_agents.features.action_features import FEATURES, action_features
from allfives_env.game.engine import GameState
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ENDS
from allfives_env.game.view import SeatView

COL, NO_REPLY = FEATURES.index("draw_reply"), FEATURES.index("no_reply")


def _forced_scores(view: SeatView, action: int, worlds: int, seed: int) -> list[int]:
    """In worlds sampled from ``view``, after ``action``: the score of the next seat's
    forced play wherever it had no play and drew (its best end for the drawn tile)."""
    rng, mover, out = np.random.default_rng(seed), view.seat, []
    nxt = (mover + 1) % view.n
    for _ in range(worlds):
        state = view.sample_state(rng)
        before = state.hands[nxt].bit_count()
        state.apply(action)
        if state.hand_over or state.current != nxt:
            continue
        after = SeatView.of(state, nxt)
        if after.hand.bit_count() <= before:  # it could play without drawing
            continue
        out.append(max(after.points_if(a) for a in after.legal))
    return out


def _positions(want: int) -> list[tuple[SeatView, int]]:
    """(view, action) pairs of random 2-seat games with tiles left to draw where the next
    seat may well have no play after the move."""
    rules, rng, out = make_rules("all_fives", players=2), np.random.default_rng(11), []
    while len(out) < want:
        state = GameState(rules, seed=int(rng.integers(1 << 30)), log=False)
        while not state.hand_over and len(out) < want:
            view = SeatView.of(state, state.current)
            f = action_features(view)
            for a in view.legal:
                if view.drawable and -f[a, NO_REPLY] > 0.4 and f[a, COL] != 0:
                    out.append((view, a))
                    break
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    return out


def test_its_mean_is_the_forced_play_of_a_blocked_next_seat() -> None:
    """feature / no_reply x 20 is the mean score of the tile the blocked seat must play."""
    checked = 0
    for i, (view, a) in enumerate(_positions(8)):
        f = action_features(view)
        mean = 20.0 * f[a, COL] / f[a, NO_REPLY]
        got = _forced_scores(view, a, 600, i)
        if len(got) < 150:
            continue
        se = max(float(np.std(got)) / len(got) ** 0.5, 0.05)
        assert abs(float(np.mean(got)) - mean) < 4.5 * se, (mean, np.mean(got), len(got))
        checked += 1
    assert checked >= 4


def test_nothing_to_draw_gives_zero() -> None:
    for state in _endgames(2, 100):
        view = SeatView.of(state, state.current)
        assert not action_features(view)[:, COL].any()


def test_a_move_that_empties_the_hand_gives_zero() -> None:
    rules, rng = make_rules("all_fives", players=2), np.random.default_rng(3)
    seen = 0
    for _ in range(60):
        state = GameState(rules, seed=int(rng.integers(1 << 30)), log=False)
        while not state.hand_over:
            view = SeatView.of(state, state.current)
            f = action_features(view)
            for a in view.legal:
                if not view.hand & ~(1 << (a // N_ENDS)):
                    assert f[a, COL] == 0.0
                    seen += 1
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    assert seen > 0


@pytest.mark.parametrize("players,teams", [(3, False), (4, True)])
def test_with_more_seats_it_is_signed_by_the_next_seats_side(players: int, teams: bool) -> None:
    v = first_moves_column(players, teams, COL, games=30, moves=6)
    assert (v <= 0).all() and (v < 0).any()


def test_a_fourteen_feature_run_trains_saves_plays_and_widens(tmp_path) -> None:
    check_a_wider_run(tmp_path, 13, 14, "action_features/5")
