"""Per-action features: the features rebuild the heuristic's choice, and the second ply
(``counter``) is the expectation over the next seat's possible hands. That the scalar
version and the numba twin agree, feature by feature, is tests/test_feature_registry.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from test_batched_bots import _positions  # noqa: E402

from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.features.action_features import (  # noqa: E402
    HEURISTIC_WEIGHTS,
    FeatureContext,
    action_features,
    plies,
)
from allfives_agents.rulebased.heuristic import best_scores, expected_best  # noqa: E402
from allfives_env.game.layout import Layout, layout_after, layout_points  # noqa: E402
from allfives_env.game.tiles import (  # noqa: E402
    N_ENDS,
    SUIT_MASK,
    mask_to_tiles,
)
from allfives_env.game.view import SeatView  # noqa: E402

CONFIGS = [("all_fives", 2, False), ("five_up", 3, False), ("muggins", 4, True),
           ("pagat", 4, False), ("all_fives", 4, True), ("all_fives", 3, False)]


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
