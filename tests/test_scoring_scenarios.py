"""Scoring and spinner scenario tables, built on exact deals.

Each scenario is a sequence of plays by seats 0, 1, 0, 1, ... from an exact deal (every seat
holds the tiles it plays, so nobody draws); every play's points are worked out by hand in the
comments: the open ends are added after the play and a positive multiple of 5 scores.
"""

from __future__ import annotations

import pytest

from allfives_env.game.engine import Deal, GameState
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import TILE_INDEX, str_to_action
from allfives_env.game.view import SeatView

Play = tuple[str, int]  # ("5-3 left", points)


def tile(text: str) -> int:
    a, b = text.split("-")
    return TILE_INDEX[(int(a), int(b))]


def scripted_state(plays: list[Play], spinner: bool = True, draws: bool = True) -> GameState:
    """Two seats; seat s holds the tiles of plays s, s+2, ... plus one spare tile each.

    With ``draws`` the rest of the set is the boneyard (so the hand goes on after the script);
    without, it is all held back (``boneyard_reserve``)."""
    tiles = [[tile(p.split()[0]) for p, _ in plays[s::2]] for s in (0, 1)]
    spare = [t for t in range(28) if t not in tiles[0] + tiles[1]]
    size = max(len(h) for h in tiles) + 1
    for hand in tiles:
        while len(hand) < size:
            hand.append(spare.pop())  # the heaviest unused tiles: [6,6] is never a spare here
    rules = make_rules("all_fives", hand_size=size, spinner=spinner,
                       boneyard_reserve=0 if draws else 28 - 2 * size)
    deal = Deal(tiles, spare, leader=0)
    return GameState(rules, seed=0, dealer=lambda _k, _rng: deal)


def run_plays(state: GameState, plays: list[Play]) -> None:
    for j, (text, points) in enumerate(plays):
        action = str_to_action(text)
        seat = state.current
        assert seat == j % 2, f"play {j} ({text}): seat {seat} is to act"
        assert state.points_if(action) == points, f"points_if({text})"
        assert SeatView.of(state, seat).points_if(action) == points, f"view.points_if({text})"
        before = state.scores[:]
        assert state.play(action) == points, f"play {j}: {text}"
        if not state.hand_over:
            assert state.scores[seat] - before[seat] == points
        last_play = next(ev for ev in reversed(state.log) if ev[0] == "play")
        assert last_play == ("play", seat, action // 5, action % 5, points)


# name, spinner, plays with their points, open-end total after the last play, arms open
SCENARIOS: list[tuple[str, bool, list[Play], int, int]] = [
    # --- seed 002's worked examples
    ("002: ends 5,3 play [3,0] on the 3 -> 5", True,
     [("3-5 lead", 0),             # 3 + 5 = 8
      ("3-0 left", 5)], 5, 2),     # 0 + 5 = 5
    ("002: ends 6,1 play [1,4] on the 1 -> 10", True,
     [("1-6 lead", 0),             # 7
      ("1-4 left", 10)], 10, 2),   # 4 + 6
    ("002: ends 4,3 play [3,3] on the 3 -> 10", True,
     [("3-4 lead", 0),             # 7
      ("3-3 left", 10)], 10, 2),   # 3+3 + 4 (the first double: a spinner, bare outer side)
    ("002: ends 4,3 play [3,3] on the 3 -> 10, no spinner", False,
     [("3-4 lead", 0),
      ("3-3 left", 10)], 10, 2),   # a double at an arm end counts both halves
    ("002: ends 6,2 play [2,5] on the 2 -> no score", True,
     [("2-6 lead", 0),             # 8
      ("2-5 left", 0)], 11, 2),    # 5 + 6 = 11
    ("002: lead [5,5] -> 10", True, [("5-5 lead", 10)], 10, 2),
    ("lead [2,3] -> 5", True, [("2-3 lead", 5)], 5, 2),
    ("lead [6,4] -> 10", True, [("4-6 lead", 10)], 10, 2),
    ("lead [0,0] scores nothing", True, [("0-0 lead", 0)], 0, 2),
    # --- the spinner
    ("spinner lead, one side covered: it counts 12", True,
     [("6-6 lead", 0),             # 12
      ("6-3 left", 15)], 15, 2),   # 3 + 12
    ("spinner lead, one side covered, no score", True,
     [("6-6 lead", 0),
      ("6-0 left", 0)], 12, 2),    # 0 + 12
    ("spinner lead, both sides covered: it counts nothing", True,
     [("6-6 lead", 0),
      ("6-3 left", 15),            # 3 + 12
      ("6-2 right", 5)], 5, 4),    # 3 + 2; up and down open but bare
    ("spinner's up and down arms open and count once covered", True,
     [("6-6 lead", 0),
      ("6-3 left", 15),
      ("6-2 right", 5),            # 3 + 2
      ("6-5 up", 10),              # 3 + 2 + 5
      ("6-0 down", 10)], 10, 4),   # 3 + 2 + 5 + 0
    ("a bare spinner side keeps counting while the other arm grows", True,
     [("5-5 lead", 10),
      ("5-0 left", 10),            # 0 + 10
      ("0-3 left", 0),             # 3 + 10 = 13
      ("3-5 left", 15),            # 5 + 10
      ("5-1 right", 0)], 6, 4),    # 5 + 1: both sides covered
    ("spinner played later, mid-arm", True,
     [("2-6 lead", 0),             # 8
      ("6-6 right", 0),            # 2 + 12 = 14: the spinner, outer side bare
      ("2-3 left", 15),            # 3 + 12
      ("6-4 right", 0),            # 3 + 4 = 7: both sides covered, up/down open
      ("6-3 up", 10),              # 3 + 4 + 3
      ("6-5 down", 15)], 15, 4),   # 3 + 4 + 3 + 5
    ("a second double is not a spinner", True,
     [("5-5 lead", 10),
      ("5-1 left", 0),             # 1 + 10 = 11
      ("5-3 right", 0),            # 1 + 3 = 4
      ("1-1 left", 5),             # 2 + 3: [1,1] counts both halves, opens no arms
      ("3-3 right", 0),            # 2 + 6 = 8
      ("1-4 left", 10)], 10, 4),   # 4 + 6
    ("doubles at both arm ends each count both halves", True,
     [("5-5 lead", 10),
      ("5-2 left", 0),             # 2 + 10 = 12
      ("5-3 right", 5),            # 2 + 3
      ("2-2 left", 0),             # 4 + 3 = 7
      ("3-3 right", 10)], 10, 4),  # 4 + 6
    ("spinner: false, a double lead is an ordinary tile", False,
     [("6-6 lead", 0),
      ("6-3 left", 15),            # 3 + 12: the other end is still the double
      ("6-2 right", 5),            # 3 + 2: no up/down
      ("2-3 right", 0)], 6, 2),    # 3 + 3
    ("spinner: false, a double mid-arm", False,
     [("1-4 lead", 5),
      ("4-4 right", 0),            # 1 + 8 = 9
      ("1-1 left", 10),            # 2 + 8
      ("4-2 right", 0)], 4, 2),    # 2 + 2: no arms open on [4,4]
]


@pytest.mark.parametrize(("name", "spinner", "plays", "open_sum", "arms"), SCENARIOS,
                         ids=[s[0] for s in SCENARIOS])
def test_scenario(name: str, spinner: bool, plays: list[Play], open_sum: int,
                  arms: int) -> None:
    state = scripted_state(plays, spinner)
    run_plays(state, plays)
    assert state.open_sum() == open_sum
    assert state.n_arms == arms
    assert not state.hand_over
    assert state.scores == [sum(p for _, p in plays[0::2]), sum(p for _, p in plays[1::2])]


def test_spinner_up_down_closed_until_both_sides_covered() -> None:
    plays = [("6-6 lead", 0), ("6-3 left", 15), ("6-2 right", 5), ("6-5 up", 10)]
    state = scripted_state(plays)
    run_plays(state, plays[:1])
    state.play(str_to_action("6-3 left"))
    # seat 0 holds [6,2]: only the bare right side of the spinner takes it
    assert state.legal_actions() == [str_to_action("6-2 right")]
    assert state.n_arms == 2 and state.spinner == tile("6-6")
    with pytest.raises(ValueError, match="illegal action"):
        state.play(str_to_action("6-2 up"))
    state.play(str_to_action("6-2 right"))
    assert state.n_arms == 4
    assert str_to_action("6-5 up") in state.legal_actions()
    assert str_to_action("6-5 down") in state.legal_actions()


def test_second_double_opens_no_arms() -> None:
    plays = [("2-6 lead", 0),      # 8
             ("6-6 right", 0),     # 2 + 12 = 14: the spinner
             ("2-2 left", 0),      # 4 + 12 = 16: a second double
             ("6-1 right", 5),     # 4 + 1: the spinner is covered, its arms open
             ("2-0 left", 0)]      # 0 + 1: [2,2] is covered on both sides, nothing opens
    state = scripted_state(plays)
    run_plays(state, plays)
    assert state.spinner == tile("6-6")
    assert state.n_arms == 4
    assert state.ends == [0, 1, 6, 6]
    assert state.cnt == [2, 2, 0, 0]


@pytest.mark.parametrize("spinner", [True, False])
def test_spinner_false_never_opens_up_down(spinner: bool) -> None:
    plays = [("6-6 lead", 0), ("6-3 left", 15), ("6-2 right", 5), ("6-5 up", 10)]
    state = scripted_state(plays, spinner=spinner, draws=False)
    run_plays(state, plays[:3])
    if spinner:  # seat 1 holds [6,5]: the spinner's up and down ends take it
        assert state.n_arms == 4
        assert {str_to_action("6-5 up"), str_to_action("6-5 down")} <= set(state.legal_actions())
    else:  # [6,6] is an ordinary tile: ends 3 and 2 only, and nobody holds a 2 or a 3
        assert state.spinner == -1 and state.n_arms == 2
        assert state.hand_over and state.hand_result["reason"] == "blocked"
