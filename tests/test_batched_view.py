"""allfives_env/batched_engine/view.py: a batched game built from one seat's view shows that seat
exactly
what the real game shows it (every field it may see, its observation, legal mask and
per-action features), in 2, 3 and 4 seats and every preset."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from test_batched_bots import _positions  # noqa: E402

from allfives_agents.batched.features import batched_features  # noqa: E402
from allfives_env.batched_engine.view import games_from_view  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402


@pytest.mark.parametrize("preset,players,teams", [("all_fives", 2, False),
                                                  ("five_up", 3, False),
                                                  ("pagat", 4, True), ("muggins", 4, False)])
def test_the_seat_sees_in_it_what_it_sees_in_the_real_game(preset: str, players: int,
                                                          teams: bool) -> None:
    checked = 0
    for games, states, live in _positions(preset, players, teams, 600, seed=9):
        k = games.k
        for b in live[:3]:
            view = SeatView.of(states[b], states[b].current)
            mine = games_from_view(view)
            G, A, T = games.G[b], games.A[b], games.T[b]
            fields = [f for f in range(k.NG) if f not in (
                k.F_EV_N, k.F_DEV_N, k.F_GAMES, k.F_DONE_LEADER, k.F_HAND_ENDED,
                k.F_GAME_ENDED, k.F_REASON, k.F_HWINNER, k.F_POINTS, k.F_FIN_WINNER,
                k.F_FIN_TRUNC, k.F_EXT_LEADER, k.F_NEED_DEAL)]
            assert (mine.G[0, fields] == G[fields]).all(), [
                f for f in fields if mine.G[0, f] != G[f]]
            for row in (k.R_SCORES, k.R_LACKS, k.R_ENDS, k.R_DBL, k.R_CNT):
                assert (mine.A[0, row] == A[row]).all(), row
            assert (mine.T[0, k.T_PLAYED] == T[k.T_PLAYED]).all()
            seat = view.seat
            assert mine.A[0, k.R_HANDS, seat] == A[k.R_HANDS, seat]
            sizes = [int(h).bit_count() for h in mine.A[0, k.R_HANDS, :players]]
            assert sizes == [int(h).bit_count() for h in A[k.R_HANDS, :players]]
            assert sorted(mine.T[0, k.T_ORDER].tolist()) == list(range(28))
            obs, mask = mine.observe_and_mask(np.array([0]))
            want_obs, want_mask = games.observe_and_mask(np.array([b]))
            assert np.array_equal(obs, want_obs) and np.array_equal(mask, want_mask)
            assert np.array_equal(batched_features(mine, np.array([0])),
                                  batched_features(games, np.array([b])))
            checked += 1
    assert checked >= 100
