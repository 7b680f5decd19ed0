"""The three end-of-hand features (``features: 17``, ``action_features/6``): ``out_pips``
(what going out collects), ``opp_out`` (what a domino by the next seat would cost) and
``my_match`` (how many of the mover's tiles still fit). With the boneyard empty in 2 seats
the world is known and each is checked against the engine's own play; with tiles to draw
``out_pips`` is the mean over worlds sampled from the mover's view; with more seats the first
two are 0; a 17-feature run trains, saves and plays, and widening a 14-feature checkpoint
keeps its play. (The batched twin: tests/test_feature_registry.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from test_other_match_feature import first_moves_column
from test_ply3_feature import _endgames, check_a_wider_run

from allfives_agents.features.action_features import FEATURES, action_features
from allfives_env.game.engine import GameState
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ENDS, pips_of
from allfives_env.game.view import SeatView

OUT_PIPS, OPP_OUT, MY_MATCH = (FEATURES.index(f) for f in ("out_pips", "opp_out", "my_match"))


def _played_tiles(state: GameState) -> set[int]:
    """The tiles the seat to act may play, by the engine."""
    return {a // N_ENDS for a in state.legal_actions()}


def test_with_the_boneyard_empty_out_pips_is_the_next_seats_pips() -> None:
    checked = 0
    for state in _endgames(2, 400):
        view = SeatView.of(state, state.current)
        f = action_features(view)
        nxt = state.hands[(state.current + 1) % 2]
        for a in view.legal:
            if view.hand & ~(1 << (a // N_ENDS)):
                assert f[a, OUT_PIPS] == 0.0
                continue
            assert f[a, OUT_PIPS] == pytest.approx(pips_of(nxt) / 20.0, abs=1e-6)
            checked += 1
    assert checked > 20


def test_with_the_boneyard_empty_opp_out_is_a_domino_by_the_next_seat() -> None:
    """-(the mover's pips left) / 20 where the engine lets the next seat play its one tile
    (it goes out), 0 where it must pass or holds more than one."""
    checked = dominoes = 0
    for state in _endgames(2, 600):
        view = SeatView.of(state, state.current)
        f = action_features(view)
        mover = state.current
        for a in view.legal:
            rest = view.hand & ~(1 << (a // N_ENDS))
            if not rest:
                continue
            s = state.copy()
            s.apply(a)
            goes_out = (not s.hand_over and s.current != mover
                        and s.hands[s.current].bit_count() == 1 and bool(s.legal_actions()))
            want = -pips_of(rest) / 20.0 if goes_out else 0.0
            assert f[a, OPP_OUT] == pytest.approx(want, abs=1e-6), (view, a)
            checked += 1
            dominoes += goes_out
    assert checked > 300 and dominoes > 20


def test_where_the_next_seat_must_pass_my_match_counts_the_movers_plays() -> None:
    """With the boneyard empty and no answer, the engine hands the turn back to the mover:
    the tiles it lets it play are my_match x 7."""
    checked = 0
    for state in _endgames(2, 600):
        view = SeatView.of(state, state.current)
        f = action_features(view)
        mover = state.current
        for a in view.legal:
            if not view.hand & ~(1 << (a // N_ENDS)):
                assert f[a, MY_MATCH] == 0.0
                continue
            s = state.copy()
            s.apply(a)
            if s.hand_over or s.current != mover:
                continue
            assert f[a, MY_MATCH] == pytest.approx(len(_played_tiles(s)) / 7.0, abs=1e-6)
            checked += 1
    assert checked > 50


def _drawable_positions(want: int) -> list[SeatView]:
    """Views of 2-seat games with tiles left to draw where the mover can go out."""
    rules, rng, out = make_rules("all_fives", players=2), np.random.default_rng(21), []
    while len(out) < want:
        state = GameState(rules, seed=int(rng.integers(1 << 30)), log=False)
        while not state.hand_over and len(out) < want:
            view = SeatView.of(state, state.current)
            if view.drawable and view.hand.bit_count() == 1 and view.legal:
                out.append(view)
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    return out


def test_with_tiles_to_draw_out_pips_is_the_mean_over_sampled_worlds() -> None:
    for i, view in enumerate(_drawable_positions(6)):
        a = view.legal[0]
        got = action_features(view)[a, OUT_PIPS] * 20.0
        rng = np.random.default_rng(i)
        nxt = (view.seat + 1) % 2
        pips = [pips_of(view.sample_state(rng).hands[nxt]) for _ in range(800)]
        se = max(float(np.std(pips)) / len(pips) ** 0.5, 0.05)
        assert abs(float(np.mean(pips)) - got) < 4.5 * se, (got, np.mean(pips))


@pytest.mark.parametrize("players,teams", [(3, False), (4, True)])
def test_with_more_seats_only_my_match_is_set(players: int, teams: bool) -> None:
    assert not first_moves_column(players, teams, OUT_PIPS, games=20, moves=6).any()
    assert not first_moves_column(players, teams, OPP_OUT, games=20, moves=6).any()
    v = first_moves_column(players, teams, MY_MATCH, games=20, moves=6)
    assert (v >= 0).all() and (v > 0).any()


def test_a_seventeen_feature_run_trains_saves_plays_and_widens(tmp_path) -> None:
    check_a_wider_run(tmp_path, 14, 17, "action_features/6")
