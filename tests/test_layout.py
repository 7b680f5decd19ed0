"""The layout arithmetic of allfives_env.game.layout, and the engine's inlined copy pinned to it."""

from __future__ import annotations

import pytest
from states import random_states

from allfives_env.game.layout import layout_after, layout_points, open_total, score_of
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ENDS, TILE_PIPS

RULES = [make_rules("all_fives"), make_rules("five_up", players=4),
         make_rules("all_fives", spinner=False, players=3), make_rules("muggins", players=3)]


def test_engine_apply_matches_layout_after() -> None:
    """The engine's hot path and the shared layout_after agree after every legal move."""
    checked = 0
    for g in random_states(RULES, 400, max_moves=14):
        for a in g.legal_actions():
            want = layout_after(g, a, g.rules.spinner)
            points = layout_points(g.ends, g.dbl, g.cnt, g.n_arms, a)
            after = g.copy()
            got_points = after.apply(a)
            k = want.n_arms
            assert (want.ends[:k], want.dbl[:k], want.cnt, k, want.spinner, want.spin_wait) == (
                after.ends[:k], after.dbl[:k], after.cnt, after.n_arms, after.spinner,
                after.spin_wait)
            assert points == got_points == g.points_if(a)
            if a % N_ENDS:  # not a lead: the scored total is the layout's open total
                assert score_of(open_total(want.ends, want.dbl, want.cnt, k)) == points
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize(("total", "points"), [(0, 0), (5, 5), (7, 0), (10, 10), (60, 60),
                                               (-5, 0), (13, 0)])
def test_score_of(total: int, points: int) -> None:
    assert score_of(total) == points


def test_a_lone_lead_counts_its_pips_once() -> None:
    for t, pips in enumerate(TILE_PIPS):
        assert layout_points([0] * 4, [False] * 4, [0] * 4, 0, t * N_ENDS) == score_of(pips)


def test_open_total_is_the_sum_of_the_arms() -> None:
    from allfives_env.game.layout import arm_count

    for g in random_states(RULES, 200, seed=3, max_moves=14):
        if g.n_played > 1:
            want = sum(arm_count(g.ends, g.dbl, g.cnt, i) for i in range(g.n_arms))
            assert open_total(g.ends, g.dbl, g.cnt, g.n_arms) == want == g.open_sum()


def test_heuristic_scores_by_tile_is_layout_points_at_each_tiles_best_end() -> None:
    """The heuristic's fast per-tile scoring (the other arms summed once) against
    ``layout_points`` of every (tile, end), on layouts after every legal move."""
    from allfives_agents.rulebased.heuristic import scores_by_tile
    from allfives_env.game.tiles import ALL_TILES_MASK, SUIT_MASK

    checked = 0
    for g in random_states(RULES, 500, seed=3, max_moves=18):
        for a in g.legal_actions():
            lay = layout_after(g, a, g.rules.spinner)
            want: dict[int, int] = {}
            for i in range(lay.n_arms):
                for t in range(28):
                    if SUIT_MASK[lay.ends[i]] >> t & 1:
                        p = layout_points(lay.ends, lay.dbl, lay.cnt, lay.n_arms,
                                          t * N_ENDS + i + 1)
                        want[t] = max(want.get(t, -1), p)
            assert scores_by_tile(lay, ALL_TILES_MASK) == want
            checked += 1
    assert checked > 1000
