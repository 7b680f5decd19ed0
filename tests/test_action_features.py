"""Per-action features: the scalar version (from a SeatView) and the numba batched version
agree exactly on thousands of positions; the features rebuild the heuristic's choice."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from test_batched_bots import _positions  # noqa: E402

from agents.action_features import (  # noqa: E402
    HEURISTIC_WEIGHTS,
    N_FEATURES,
    action_features,
)
from agents.base import make_agent  # noqa: E402
from agents.batched_features import batched_features  # noqa: E402
from allfives_env.tiles import N_ACTIONS  # noqa: E402
from allfives_env.view import SeatView  # noqa: E402

CONFIGS = [("all_fives", 2, False), ("five_up", 3, False), ("muggins", 4, True),
           ("pagat", 4, False), ("all_fives", 4, True), ("all_fives", 3, False)]


@pytest.mark.parametrize("preset,players,teams", CONFIGS)
def test_batched_equals_scalar(preset: str, players: int, teams: bool) -> None:
    compared = nonzero = 0
    for games, states, live in _positions(preset, players, teams, 1500, seed=3):
        got = batched_features(games, live)
        assert got.shape == (len(live), N_ACTIONS, N_FEATURES) and got.dtype == np.float32
        for j, b in enumerate(live):
            view = SeatView.of(states[b], states[b].current)
            want = action_features(view)
            assert np.array_equal(got[j], want), (preset, int(b), view)
            illegal = np.ones(N_ACTIONS, bool)
            illegal[list(view.legal)] = False
            assert not want[illegal].any()
            nonzero += int(want[:, 1:3].any())
            compared += 1
    assert compared >= 1500 and nonzero > compared // 4


def test_weights_rebuild_the_heuristic_choice() -> None:
    """argmax of F @ HEURISTIC_WEIGHTS is the heuristic's move (ties aside)."""
    heuristic = make_agent("heuristic", seed=0)
    same = total = 0
    for _games, states, live in _positions("all_fives", 2, False, 1500, seed=5):
        for b in live:
            view = SeatView.of(states[b], states[b].current)
            if len(view.legal) < 2:
                continue
            value = action_features(view) @ HEURISTIC_WEIGHTS
            legal = list(view.legal)
            pick = legal[int(np.argmax(value[legal]))]
            same += pick == heuristic.act({}, view)
            total += 1
    assert total > 300 and same / total > 0.97
