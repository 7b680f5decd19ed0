"""Rendering: the text cross, the picture, and the env's render modes."""

from __future__ import annotations

import numpy as np
import pytest

from allfives_env.env import env
from allfives_env.game.engine import Deal, GameState
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import TILE_INDEX, str_to_action
from allfives_env.rendering.render import layout_of, render_ansi
from allfives_env.rendering.render_image import FELT, render_rgb


def _crossed() -> GameState:
    """Spinner [5,5] led, then [4,5] left, [1,5] right, [5,6] up, [2,5] down."""
    hands = [[(5, 5), (1, 5), (2, 5), (0, 0)], [(4, 5), (5, 6), (0, 1), (0, 2)]]
    dealt = [[TILE_INDEX[t] for t in h] for h in hands]
    rest = [t for t in range(28) if all(t not in h for h in dealt)]
    g = GameState(make_rules(players=2, hand_size=4),
                  dealer=lambda k, rng: Deal(dealt, rest, leader=0))
    for move in ("5-5 lead", "4-5 left", "1-5 right", "5-6 up", "2-5 down"):
        g.play(str_to_action(move))
    return g


def test_layout_of_rebuilds_the_arms() -> None:
    lay = layout_of(_crossed())
    assert [(left, right) for _, left, right in lay.line] == [(4, 5), (5, 5), (5, 1)]
    assert lay.spinner_at == 1
    assert [(near, far) for _, near, far in lay.up] == [(5, 6)]
    assert [(near, far) for _, near, far in lay.down] == [(5, 2)]


def test_ansi_draws_a_cross_around_the_spinner() -> None:
    text = render_ansi(_crossed(), viewer=1)
    cross = "\n".join([
        "        6",
        "        ─",
        "        5",
        "        5",
        "  [4|5] ═ [5|1]",
        "        5",
        "        5",
        "        ─",
        "        2",
    ])
    assert cross in text
    assert "open ends: left 4, right 1, up 6, down 2; total 13" in text
    assert "scores: player_0 15   player_1 0" in text
    assert "player_1 to play; hand: [0|1] [0|2]" in text
    assert "[5|6]" not in text.split("hand:")[1]  # only the viewer's own tiles are listed


def _dealt(hands: list[list[tuple[int, int]]], rules: dict, moves: list[str]) -> GameState:
    dealt = [[TILE_INDEX[t] for t in h] for h in hands]
    rest = [t for t in range(28) if all(t not in h for h in dealt)]
    g = GameState(make_rules(**rules), dealer=lambda k, rng: Deal(dealt, rest, leader=0))
    for move in moves:
        g.play(str_to_action(move))
    return g


def test_doubles_never_look_like_arm_tiles() -> None:
    """A double across the row (5/═/5) or across an arm ([3‖3]) against a plain tile
    standing in an arm (6/─/5)."""
    g = _dealt([[(5, 5), (3, 5), (1, 1)], [(5, 6), (3, 3), (0, 1)]],
               dict(players=2, hand_size=3), ["5-5 lead", "5-6 right", "3-5 left", "3-3 left"])
    rows = render_ansi(g, viewer=None).splitlines()
    row = rows.index("  ═ [3|5] ═ [5|6]")  # [3,3] and the spinner [5,5] across the row
    assert rows[row - 1] == rows[row + 1] == "  3       5"
    cross = render_ansi(_crossed(), viewer=None).splitlines()
    row = cross.index("  [4|5] ═ [5|1]")  # the spinner lies across the row: doubled bar
    assert cross[row - 3] == cross[row + 3] == "        ─"  # [5,6] and [2,5] stand in arms


def test_double_across_an_arm_has_a_doubled_bar() -> None:
    g = _dealt([[(5, 5), (5, 6), (3, 3)], [(4, 5), (3, 5), (0, 1)]],
               dict(players=2, hand_size=3),
               ["5-5 lead", "4-5 left", "5-6 right", "3-5 up", "3-3 up"])
    assert "[3‖3]" in render_ansi(g, viewer=None)
    assert "[3|3]" not in render_ansi(g, viewer=None)


@pytest.mark.parametrize("lead,total", [((5, 5), 10), ((2, 3), 5), ((1, 2), 3)])
def test_a_lone_lead_counts_once(lead: tuple[int, int], total: int) -> None:
    from allfives_env.rendering.render_image import _open_ends_caption

    g = _dealt([[lead, (6, 6)], [(0, 0), (0, 1)]], dict(players=2, hand_size=2),
               [f"{lead[0]}-{lead[1]} lead"])
    text = render_ansi(g, viewer=None)
    assert f"open ends: the lead [{lead[0]}|{lead[1]}] alone; total {total}" in text
    assert "left" not in text.split("open ends:")[1].splitlines()[0]
    assert _open_ends_caption(g).startswith(f"open ends: the lead alone = {total}")


def test_long_hands_wrap_within_100_columns() -> None:
    """Five-up with a big hand: the hand and legal lines wrap, no tile is split."""
    g = GameState(make_rules("five_up", players=2, hand_size=14), seed=1)
    text = render_ansi(g, viewer=g.current)
    assert max(len(line) for line in text.splitlines()) <= 100
    hand_text = text.split("to play; hand: ")[1].split("legal:")[0]
    assert len(hand_text.split()) == 14 and all(len(t) == 5 for t in hand_text.split())


def test_ansi_without_viewer_hides_every_hand() -> None:
    text = render_ansi(_crossed(), viewer=None)
    assert "to play" not in text and "[0|0]" not in text


def test_ansi_empty_table_and_unlogged_state() -> None:
    g = GameState(make_rules(players=3), seed=1)
    assert "no tiles on the table" in render_ansi(g, g.current)
    assert "layout not logged" in render_ansi(g.copy(), g.current)


def _long_line_state() -> GameState:
    rng = np.random.default_rng(0)
    for seed in range(200):
        g = GameState(make_rules(players=2, spinner=False, hand_size=11), seed=seed)
        while not g.hand_over:
            legal = g.legal_actions()
            g.apply(legal[int(rng.integers(len(legal)))])
        if g.n_played >= 19:
            return g
    raise AssertionError("no long hand in 200 seeds")


@pytest.mark.parametrize("make", [_crossed, _long_line_state])
def test_rgb_picture(make) -> None:
    g = make()
    img = render_rgb(g, None if g.hand_over else g.current)
    assert img.shape == (720, 960, 3) and img.dtype == np.uint8
    ivory = (img.min(axis=2) > 225).sum()
    assert ivory > 5000, "tiles should be drawn"
    # nothing is cut off at the sides of the table: the edge columns are bare felt
    table = img[110:500]
    for edge in (table[:, :3], table[:, -3:]):
        assert np.abs(edge.astype(int) - FELT).max() <= 2


def test_rgb_changes_with_the_state() -> None:
    g = _crossed()
    a = render_rgb(g, g.current)
    g.play(str_to_action("0-1 right"))
    assert not np.array_equal(a, render_rgb(g, g.current))


def test_env_render_modes(capsys: pytest.CaptureFixture[str]) -> None:
    for mode in ("ansi", "human", "rgb_array"):
        e = env(players=4, render_mode=mode)
        e.reset(seed=3)
        out = e.render()
        if mode == "ansi":
            assert isinstance(out, str) and "player_" in out and "to play" in out
        elif mode == "human":
            assert out is None and "to play" in capsys.readouterr().out
        else:
            assert isinstance(out, np.ndarray) and out.shape[2] == 3
        e.close()
