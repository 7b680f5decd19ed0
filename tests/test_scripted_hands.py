"""Whole hands from exact deals, with every event, result and score worked out by hand.

A script lists a hand's events as the rules must produce them: ``"s0 5-5 lead +10"`` (seat 0
plays [5,5] as the lead and scores 10), ``"s1 draw 2-3"``, ``"s1 pass"``. The driver plays the
scripted plays (each must be legal for the seat to act) and checks that the engine's own event
log, hand result and scores are exactly the scripted ones. Unless a test says otherwise the
boneyard is held back whole by ``boneyard_reserve``, so nobody draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from allfives_env.game.engine import Deal, GameState
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import LEAD, N_ENDS, TILE_INDEX, str_to_action


def tile(text: str) -> int:
    a, b = text.split("-")
    return TILE_INDEX[(int(a), int(b))]


def parse_event(text: str) -> tuple:
    parts = text.split()
    seat = int(parts[0][1:])
    if parts[1] == "pass":
        return ("pass", seat)
    if parts[1] == "draw":
        return ("draw", seat, tile(parts[2]))
    action = str_to_action(f"{parts[1]} {parts[2]}")
    points = int(parts[3]) if len(parts) > 3 else 0
    return ("play", seat, action // N_ENDS, action % N_ENDS, points)


def make_deal(hands: list[str], drawable: str = "") -> Deal:
    """Hands as ``"5-5 0-5 2-3"`` per seat; the boneyard starts with ``drawable`` in draw
    order, then the rest of the set in index order."""
    held = [[tile(t) for t in h.split()] for h in hands]
    first = [tile(t) for t in drawable.split()]
    used = {t for h in held for t in h} | set(first)
    assert len(used) == sum(map(len, held)) + len(first), "a tile is dealt twice"
    return Deal(held, first + [t for t in range(28) if t not in used], leader=0)


def new_game(preset: str, deals: list[Deal], drawable: int = 0, **overrides: Any) -> GameState:
    """A game whose hand k is ``deals[k]``; only ``drawable`` boneyard tiles can be drawn."""
    n, size = len(deals[0].hands), len(deals[0].hands[0])
    rules = make_rules(preset, players=n, hand_size=size,
                       boneyard_reserve=28 - n * size - drawable, **overrides)
    return GameState(rules, seed=0, dealer=lambda k, _rng: deals[k])


def play_hand(state: GameState, script: list[str]) -> None:
    """Play the script's plays (those not yet in the hand's log) and check the whole log."""
    events = [parse_event(e) for e in script]
    for j, ev in enumerate(events):
        if ev[0] == "play" and j >= len(state.log):
            assert not state.hand_over, f"event {j} {script[j]!r}: the hand is over"
            assert state.current == ev[1], f"event {j} {script[j]!r}: seat {state.current} acts"
            state.play(ev[2] * N_ENDS + ev[3])
    assert state.hand_over, "the script ended before the hand did"
    assert state.history[-1]["events"] == events


def result(reason: str, winner: int | None, hand_points: list[int]) -> dict:
    return {"reason": reason, "winner": winner, "hand_points": hand_points}


def lead_tiles(state: GameState) -> set[int]:
    legal = state.legal_actions()
    assert all(a % N_ENDS == LEAD for a in legal)
    return {a // N_ENDS for a in legal}


# ------------------------------------------------------------------ every preset
SHORT = make_deal(["5-5 0-5 2-3", "5-6 0-1 4-6"])
SHORT_SCRIPT = [
    "s0 5-5 lead +10",   # 10
    "s1 5-6 left",       # 6 + 10 (the spinner's right side is bare) = 16
    "s0 0-5 right",      # 6 + 0: both sides covered, up/down open bare
    "s1 4-6 left",       # 4 + 0
    "s0 pass",           # [2,3] matches none of 4, 0, 5
    "s1 0-1 right +5",   # 4 + 1; seat 1 dominoes, seat 0 keeps [2,3] = 5 pips
]
SECOND = make_deal(["6-6 1-6 0-1", "4-6 2-3 3-5"])


@pytest.mark.parametrize(("preset", "hand_points", "scores", "leader2", "leads2"), [
    ("all_fives", [-5, 0], [5, 5], 1, {"4-6", "2-3", "3-5"}),   # seat 0 loses 5 (own pips)
    ("five_up", [0, 5], [10, 10], 0, {"6-6"}),                # winner collects 5; highest double
    ("muggins", [0, 5], [10, 10], 1, {"4-6", "2-3", "3-5"}),  # the winner leads any tile
    ("pagat", [0, 5], [10, 10], 1, {"4-6", "2-3", "3-5"}),
])
def test_short_domino_hand_every_preset(preset: str, hand_points: list[int], scores: list[int],
                                        leader2: int, leads2: set[str]) -> None:
    state = new_game(preset, [SHORT, SECOND])
    assert state.leader == 0  # five_up, muggins: seat 0 holds the only double
    play_hand(state, SHORT_SCRIPT)
    assert state.hand_result == result("domino", 1, hand_points)
    assert state.scores == scores and not state.game_over
    state.next_hand()
    assert state.leader == leader2
    assert lead_tiles(state) == {tile(t) for t in leads2}


# A hand at the presets' own hand sizes for two players. Seat 0 leads the spinner [6,6].
FULL_SCRIPT = [
    "s0 6-6 lead",       # 12
    "s1 6-3 left +15",   # 3 + 12
    "s0 6-2 right +5",   # 3 + 2; up/down open
    "s1 6-5 up +10",     # 3 + 2 + 5
    "s0 6-4 down",       # 3 + 2 + 5 + 4 = 14
    "s1 3-3 left",       # 6 + 2 + 5 + 4 = 17
    "s0 3-1 left",       # 1 + 2 + 5 + 4 = 12
    "s1 2-2 right",      # 1 + 4 + 5 + 4 = 14
    "s0 2-5 right +15",  # 1 + 5 + 5 + 4
    "s1 5-5 up +20",     # 1 + 5 + 10 + 4
    "s0 4-0 down",       # 1 + 5 + 10 + 0 = 16
    "s1 1-4 left",       # 4 + 5 + 10 + 0 = 19
    "s0 0-1 down +20",   # 4 + 5 + 10 + 1
]
FULL_MORE = [
    "s1 4-4 left",       # 8 + 5 + 10 + 1 = 24
    "s0 1-1 down +25",   # 8 + 5 + 10 + 2
    "s1 5-0 right +20",  # 8 + 0 + 10 + 2
    "s0 1-2 down +20",   # 8 + 0 + 10 + 2; seat 0 dominoes
]
FULL7 = make_deal(["6-6 2-6 4-6 1-3 2-5 0-4 0-1", "3-6 5-6 3-3 2-2 5-5 1-4 4-5"])
FULL9 = make_deal(["6-6 2-6 4-6 1-3 2-5 0-4 0-1 1-1 1-2",
                   "3-6 5-6 3-3 2-2 5-5 1-4 4-4 0-5 4-5"])


@pytest.mark.parametrize(("preset", "deal", "script", "hand_points", "scores"), [
    # in play: seat 0 5+15+20 = 40, seat 1 15+10+20 = 45; seat 1 keeps [4,5] = 9 -> 10
    ("five_up", FULL7, FULL_SCRIPT, [10, 0], [50, 45]),
    ("muggins", FULL7, FULL_SCRIPT, [10, 0], [50, 45]),
    # in play: seat 0 40+25+20 = 85, seat 1 45+20 = 65; seat 1 keeps [4,5]
    ("all_fives", FULL9, FULL_SCRIPT + FULL_MORE, [0, -10], [85, 55]),
    ("pagat", FULL9, FULL_SCRIPT + FULL_MORE, [10, 0], [95, 65]),
])
def test_full_size_hand(preset: str, deal: Deal, script: list[str], hand_points: list[int],
                        scores: list[int]) -> None:
    rules = make_rules(preset)
    assert len(deal.hands[0]) == rules.hand_size  # the preset's own deal for 2 players
    state = GameState(rules, seed=0, dealer=lambda _k, _rng: deal)
    play_hand(state, script)
    assert state.hand_result == result("domino", 0, hand_points)
    assert state.scores == scores


# ------------------------------------------------------------------ end of hand, rounding
THREE = make_deal(["1-2 0-4", "2-6 3-4", "1-4 2-5"])
THREE_SCRIPT = [
    "s0 1-2 lead",       # 3
    "s1 2-6 right",      # 1 + 6 = 7
    "s2 1-4 left +10",   # 4 + 6
    "s0 0-4 left",       # 0 + 6; seat 0 dominoes; seats 1, 2 keep 7 pips each
]


@pytest.mark.parametrize(("preset", "overrides", "hand_points", "scores"), [
    ("pagat", {"rounding": "per_hand"}, [10, 0, 0], [10, 0, 10]),    # 7 -> 5, twice
    ("pagat", {"rounding": "total"}, [15, 0, 0], [15, 0, 10]),       # 14 -> 15
    ("all_fives", {}, [0, -5, -5], [0, -5, 5]),                      # each loses 7 -> 5
    ("all_fives", {"rounding": "total"}, [0, -5, -5], [0, -5, 5]),   # subtract_own: per seat
])
def test_rounding_three_players(preset: str, overrides: dict, hand_points: list[int],
                                scores: list[int]) -> None:
    state = new_game(preset, [THREE], **overrides)
    play_hand(state, THREE_SCRIPT)
    assert state.hand_result == result("domino", 0, hand_points)
    assert state.scores == scores


TEAMS = make_deal(["3-5 0-4", "5-6 1-2", "3-4 2-2", "1-6 0-3"])
TEAMS_SCRIPT = [
    "s0 3-5 lead",       # 8
    "s1 5-6 right",      # 3 + 6 = 9
    "s2 3-4 left +10",   # 4 + 6: for side 0 (seats 0 and 2)
    "s3 1-6 right +5",   # 4 + 1: for side 1 (seats 1 and 3)
    "s0 0-4 left",       # 0 + 1; seat 0 dominoes: side 0 wins
]


@pytest.mark.parametrize(("overrides", "hand_points", "scores"), [
    # seats 1 and 3 keep [1,2] and [0,3]: 3 pips each
    ({"hand_end": "winner_collects", "rounding": "per_hand"}, [10, 0], [20, 5]),  # 5 + 5
    ({"hand_end": "winner_collects", "rounding": "total"}, [5, 0], [15, 5]),      # 6 -> 5
    # seat 2 keeps [2,2] = 4 -> 5; seats 1 and 3 lose 5 each
    ({"hand_end": "subtract_own"}, [-5, -10], [5, -5]),
])
def test_teams_hand(overrides: dict, hand_points: list[int], scores: list[int]) -> None:
    state = new_game("pagat", [TEAMS], **overrides)
    assert state.rules.teams and state.rules.n_sides == 2
    play_hand(state, TEAMS_SCRIPT)
    assert state.hand_result == result("domino", 0, hand_points)
    assert state.scores == scores


# ------------------------------------------------------------------ blocked hands
BLOCKED = {
    # seat 0 keeps 1-2 2-4 (9 pips), seat 1 keeps 1-3 3-4 (11): open ends 6 and 0
    "fewest pips": (make_deal(["0-0 1-2 2-4", "0-6 1-3 3-4"]),
                    ["s0 0-0 lead", "s1 0-6 left"]),
    # seat 0 keeps 3-6 5-6 (20 pips, 2 tiles), seat 1 keeps 2-2 4-4 2-6 (20, 3 tiles)
    "fewest tiles": (make_deal(["0-0 1-6 3-6 5-6", "0-6 2-2 4-4 2-6"]),
                     ["s0 0-0 lead", "s1 0-6 left", "s0 6-1 left"]),
    # 14 pips and 2 tiles each
    "tie": (make_deal(["0-0 2-3 4-5", "0-6 2-4 3-5"]), ["s0 0-0 lead", "s1 0-6 left"]),
}


@pytest.mark.parametrize(("case", "hand_end", "winner", "hand_points"), [
    ("fewest pips", "winner_collects", 0, [10, 0]),      # 11 -> 10
    ("fewest pips", "subtract_own", None, [-10, -10]),  # 9 -> 10, 11 -> 10
    ("fewest tiles", "winner_collects", 0, [20, 0]),
    ("fewest tiles", "subtract_own", None, [-20, -20]),
    ("tie", "winner_collects", None, [0, 0]),
    ("tie", "subtract_own", None, [-15, -15]),          # 14 -> 15
])
def test_blocked_two_players(case: str, hand_end: str, winner: int | None,
                             hand_points: list[int]) -> None:
    deal, script = BLOCKED[case]
    state = new_game("all_fives", [deal], hand_end=hand_end)
    play_hand(state, script)  # blocked at once: no seat can play and nothing can be drawn
    assert state.hand_result == result("blocked", winner, hand_points)
    assert state.scores == hand_points


@pytest.mark.parametrize(("hands", "rounding", "winner", "hand_points"), [
    # seat 0 keeps 1-2 (3 pips); seats 1, 2 keep 7 each
    (["0-0 1-2", "0-6 2-5", "1-1 2-3"], "per_hand", 0, [10, 0, 0]),
    (["0-0 1-2", "0-6 2-5", "1-1 2-3"], "total", 0, [15, 0, 0]),
    # seats 0 and 1 tie on 4 pips and 1 tile: nobody scores
    (["0-0 1-3", "0-6 2-2", "1-1 2-3"], "per_hand", None, [0, 0, 0]),
])
def test_blocked_three_players(hands: list[str], rounding: str, winner: int | None,
                               hand_points: list[int]) -> None:
    state = new_game("pagat", [make_deal(hands)], rounding=rounding)
    play_hand(state, ["s0 0-0 lead", "s1 0-6 left"])
    assert state.hand_result == result("blocked", winner, hand_points)


@pytest.mark.parametrize(("rounding", "hand_points"), [
    ("per_hand", [10, 0]),   # seats 1, 3 keep 7 pips each: 5 + 5
    ("total", [15, 0]),      # 14 -> 15
])
def test_blocked_teams_sum_their_seats(rounding: str, hand_points: list[int]) -> None:
    # side 0 keeps 1-1 + 2-3 1-4 = 12 pips, side 1 keeps 3-4 + 1-2 2-2 = 14
    deal = make_deal(["0-0 1-1", "0-6 3-4", "2-3 1-4", "1-2 2-2"])
    state = new_game("pagat", [deal], rounding=rounding)
    play_hand(state, ["s0 0-0 lead", "s1 0-6 left"])
    assert state.hand_result == result("blocked", 0, hand_points)


# ------------------------------------------------------------------ drawing and passing
DRAW = make_deal(["2-3 4-4", "0-0 1-1"], drawable="0-1 4-6 3-6")


@pytest.mark.parametrize(("preset", "hand_points", "scores"), [
    ("all_fives", [0, -5], [15, -5]),   # seat 1 keeps 0-0 1-1 0-1 = 3 pips -> 5
    ("pagat", [5, 0], [20, 0]),
])
def test_forced_draws_and_pass(preset: str, hand_points: list[int], scores: list[int]) -> None:
    state = new_game(preset, [DRAW], drawable=3)
    state.play(str_to_action("2-3 lead"))
    # seat 1 had no 2 or 3: it drew 0-1, 4-6, then 3-6, which it must play at once
    assert state.current == 1
    assert state.legal_actions() == [str_to_action("3-6 right")]
    play_hand(state, [
        "s0 2-3 lead +5",
        "s1 draw 0-1",
        "s1 draw 4-6",
        "s1 draw 3-6",
        "s1 3-6 right",     # 2 + 6 = 8
        "s0 pass",          # [4,4] matches neither 2 nor 6; nothing left to draw
        "s1 4-6 right",     # 2 + 4
        "s0 4-4 right +10",  # 2 + 8 (the first double: a spinner, bare outer side)
    ])
    assert state.hand_result == result("domino", 0, hand_points)
    assert state.scores == scores


@pytest.mark.parametrize(("preset", "winner", "hand_points"), [
    ("pagat", 1, [0, 10]),          # seat 1 keeps 3 pips, seat 0 keeps [4,4]: 8 -> 10
    ("all_fives", None, [-10, -5]),
])
def test_boneyard_reserve_is_never_drawn(preset: str, winner: int | None,
                                         hand_points: list[int]) -> None:
    deal = make_deal(["2-3 4-4", "0-0 1-1"], drawable="0-1 3-6")  # 3-6 would match
    state = new_game(preset, [deal], drawable=1)
    assert state.rules.boneyard_reserve == 23
    play_hand(state, ["s0 2-3 lead +5", "s1 draw 0-1", "s1 pass"])
    assert state.bone_pos == 1 and len(state.boneyard) == 24
    assert state.hand_result == result("blocked", winner, hand_points)


# ------------------------------------------------------------------ winning
def test_immediate_win_mid_hand() -> None:
    state = new_game("all_fives", [SHORT], target=10)
    play_hand(state, ["s0 5-5 lead +10"])
    assert state.hand_result == result("target", 0, [0, 0])
    assert state.game_over and state.winner == 0 and state.scores == [10, 0]
    with pytest.raises(RuntimeError):
        state.next_hand()


def test_immediate_win_for_a_team_mid_hand() -> None:
    deal = make_deal(["2-3 5-6", "1-3 4-6", "2-2 0-5", "3-3 1-6"])
    state = new_game("all_fives", [deal], target=10)
    play_hand(state, ["s0 2-3 lead +5", "s1 3-1 right", "s2 2-2 left +5"])  # 4 + 1
    assert state.hand_result == result("target", 0, [0, 0])
    assert state.winner == 0 and state.scores == [10, 0]


def test_immediate_win_by_end_of_hand_points() -> None:
    # side 0 has 10 in play, then collects 5 + 5
    state = new_game("pagat", [TEAMS], target=20, rounding="per_hand")
    play_hand(state, TEAMS_SCRIPT)
    assert state.hand_result == result("domino", 0, [10, 0])
    assert state.game_over and state.winner == 0 and state.scores == [20, 5]


SECOND_SCRIPT = [
    "s0 6-6 lead",       # 12
    "s1 4-6 left",       # 4 + 12 = 16
    "s0 1-6 right +5",   # 4 + 1
    "s1 pass",           # [2,3], [3,5]: no 4, 1 or 6
    "s0 0-1 right",      # 4 + 0; seat 0 dominoes and collects 13 -> 15
]


def test_end_of_hand_tie_at_the_top_plays_on() -> None:
    state = new_game("five_up", [SHORT, SECOND], target=10, win_check="end_of_hand")
    play_hand(state, SHORT_SCRIPT)        # seat 0 reaches 10 at once, but the hand goes on
    assert state.scores == [10, 10]       # both at the target: a tie, another hand
    assert not state.game_over
    state.next_hand()
    play_hand(state, SECOND_SCRIPT)
    assert state.hand_result == result("domino", 0, [15, 0])
    assert state.scores == [30, 10]       # both over the target: the highest wins
    assert state.game_over and state.winner == 0 and not state.truncated


@pytest.mark.parametrize(("overrides", "scores"), [
    ({}, [5, 5]),
    ({"target": 5, "win_check": "end_of_hand"}, [5, 5]),  # a tie at the target, no hands left
])
def test_max_hands_truncates(overrides: dict, scores: list[int]) -> None:
    state = new_game("all_fives", [SHORT], max_hands=1, **overrides)
    play_hand(state, SHORT_SCRIPT)
    assert state.scores == scores
    assert state.game_over and state.truncated and state.winner is None


# ------------------------------------------------------------------ leaders
@pytest.mark.parametrize(("hands", "leader", "lead"), [
    (["5-5 0-1", "6-6 0-2"], 1, "6-6"),   # the highest double, whatever Deal.leader says
    (["0-0 0-1", "2-4 1-5"], 0, "0-0"),   # a double beats any heavier tile
    (["1-6 2-4", "3-4 2-5"], 0, "1-6"),   # no double: weight 7 ties, the higher half wins
    (["3-4 0-1", "2-5 0-2"], 1, "2-5"),
])
def test_highest_double_leader(hands: list[str], leader: int, lead: str) -> None:
    deal = make_deal(hands)
    deal.leader = 1 - leader
    state = new_game("five_up", [deal])
    assert state.leader == state.current == leader
    assert lead_tiles(state) == {tile(lead)}


@pytest.mark.parametrize(("preset", "leader2", "leads2"), [
    ("muggins", 1, {"6-6"}),             # blocked: the first-hand rule, the highest double
    ("all_fives", 0, {"4-6", "2-3", "3-5"}),  # blocked: the first-hand rule, random (Deal.leader)
])
def test_leader_after_a_blocked_hand(preset: str, leader2: int, leads2: set[str]) -> None:
    first, script = BLOCKED["fewest pips"]  # seat 0 leads its [0,0] and wins the blocked hand
    second = make_deal(["4-6 2-3 3-5", "6-6 1-6 0-1"])
    state = new_game(preset, [first, second], hand_end="winner_collects")
    play_hand(state, script)
    assert state.hand_result["winner"] == 0
    state.next_hand()
    assert state.leader == leader2
    assert lead_tiles(state) == {tile(t) for t in leads2}


def test_random_leaders_use_the_game_seed() -> None:
    rules = make_rules("all_fives", players=3)
    leaders = [GameState(rules, seed=s).leader for s in range(200)]
    assert set(leaders) == {0, 1, 2}
    assert leaders == [GameState(rules, seed=s).leader for s in range(200)]
    rng = np.random.default_rng(5)
    assert GameState(rules, seed=rng).rng is rng
