"""Per-action features: the scalar version (from a SeatView) and the numba batched version
agree exactly on thousands of positions; the features rebuild the heuristic's choice."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from test_batched_bots import _positions  # noqa: E402

from agents.action_features import (  # noqa: E402
    BASE_FEATURES,
    FEATURES,
    HEURISTIC_WEIGHTS,
    N_FEATURES,
    FeatureContext,
    action_features,
    plies,
)
from agents.base import make_agent  # noqa: E402
from agents.batched_features import batched_features  # noqa: E402
from agents.heuristic import best_scores, expected_best  # noqa: E402
from allfives_env.layout import Layout, layout_after, layout_points  # noqa: E402
from allfives_env.tiles import (  # noqa: E402
    N_ACTIONS,
    N_ENDS,
    SUIT_MASK,
    mask_to_tiles,
)
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


def _counter_by_subsets(ctx: FeatureContext, layout: Layout, rest: int) -> float:
    """``counter`` computed another way: over every set of the candidate reply tiles the next
    seat might hold (each with chance q, independently), it plays the best-scoring one
    (lowest tile on a tie; its best end, the highest on a tie), or none."""
    view, spin = ctx.view, ctx.view.rules.spinner
    options: dict[int, tuple[int, int]] = {}
    for t in mask_to_tiles(ctx.allowed):
        for i in range(layout.n_arms):
            if SUIT_MASK[layout.ends[i]] >> t & 1:
                a = t * N_ENDS + i + 1
                p = layout_points(layout.ends, layout.dbl, layout.cnt, layout.n_arms, a)
                if t not in options or p >= options[t][0]:
                    options[t] = (p, a)
    tiles = sorted(options)

    def then(after: Layout) -> float:
        if ctx.second == view.seat:
            return float(max(best_scores(after, rest), default=0))
        return expected_best(best_scores(after, ctx.allowed2), ctx.q2)[0]

    total = 0.0
    for bits in range(1 << len(tiles)):
        held = [t for j, t in enumerate(tiles) if bits >> j & 1]
        chance = ctx.q ** len(held) * (1.0 - ctx.q) ** (len(tiles) - len(held))
        if held:
            pick = min(held, key=lambda t: (-options[t][0], t))
            total += chance * then(layout_after(layout, options[pick][1], spin))
        else:
            total += chance * then(layout)
    return total


@pytest.mark.parametrize("preset,players,teams", CONFIGS[:3])
def test_counter_is_the_expectation_over_the_next_seats_possible_hands(
        preset: str, players: int, teams: bool) -> None:
    """The second ply's sum, term by term, equals the expectation over every set of tiles
    the next seat might hold; in 2 seats the follow-up is the mover's own best."""
    checked = 0
    for _games, states, live in _positions(preset, players, teams, 600, seed=11):
        for b in live:
            view = SeatView.of(states[b], states[b].current)
            ctx = FeatureContext(view)
            assert (ctx.second == view.seat) == (players == 2)
            for a in view.legal:
                rest = view.hand & ~(1 << (a // N_ENDS))
                layout = layout_after(view, a, view.rules.spinner)
                if not rest or len(best_scores(layout, ctx.allowed)) > 10:
                    continue
                got = plies(ctx, layout, rest, deeper=False)[0]
                assert got == pytest.approx(_counter_by_subsets(ctx, layout, rest), abs=1e-9)
                checked += 1
    assert checked > 500


def test_feature_sets_are_prefixes() -> None:
    """Asking for the first 9 gives action_features/1's columns unchanged and no counter;
    other counts are refused with the range."""
    assert FEATURES[BASE_FEATURES:] == ("counter", "ply3", "can_next", "other_match",
                                        "draw_reply", "out_pips", "opp_out", "my_match")
    assert N_FEATURES == 17
    for _games, states, live in _positions("all_fives", 4, True, 200, seed=2):
        got9 = batched_features(_games, live, k=BASE_FEATURES)
        every = batched_features(_games, live)
        assert got9.shape[-1] == BASE_FEATURES and np.array_equal(got9, every[..., :9])
        for k in (10, 12, 13):
            assert np.array_equal(batched_features(_games, live, k=k), every[..., :k])
        for j, b in enumerate(live):
            view = SeatView.of(states[b], states[b].current)
            assert np.array_equal(action_features(view, BASE_FEATURES), got9[j])
    for bad in (8, 11, 15):
        with pytest.raises(ValueError, match="9, 10, 12, 13, 14"):
            action_features(view, bad)
