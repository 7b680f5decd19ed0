"""Tests of the independent record checker on small hand-built records.

Every record here is built by hand from the rules text: deals are tiny and most boneyards are
held back entirely by ``boneyard_reserve``, so each hand is a few events long and its points,
results and scores can be worked out on paper (the comments show the sums).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from reference_checker import check_record, round5

ALL_TILES = [(a, b) for a in range(7) for b in range(a, 7)]

# Two players, three tiles each, the whole boneyard in reserve, one hand per game.
BASE_RULES: dict[str, Any] = {
    "players": 2,
    "teams": False,
    "hand_size": 3,
    "target": 100,
    "win_check": "immediate",
    "first_leader": "random",
    "next_leader": "hand_winner",
    "spinner": True,
    "hand_end": "winner_collects",
    "rounding": "per_hand",
    "boneyard_reserve": 22,
    "max_hands": 1,
}


def rules(**changes: Any) -> dict[str, Any]:
    """BASE_RULES with changes; the reserve follows the deal size unless it is given."""
    out = {**BASE_RULES, **changes}
    if "boneyard_reserve" not in changes:
        out["boneyard_reserve"] = 28 - out["players"] * out["hand_size"]
    return out


def play(seat: int, tile: list[int], end: str, points: int) -> dict[str, Any]:
    return {"type": "play", "seat": seat, "tile": tile, "end": end, "points": points}


def draw(seat: int, tile: list[int]) -> dict[str, Any]:
    return {"type": "draw", "seat": seat, "tile": tile}


def pass_(seat: int) -> dict[str, Any]:
    return {"type": "pass", "seat": seat}


def result(reason: str, winner: int | None, hand_points: list[int]) -> dict[str, Any]:
    return {"reason": reason, "winner": winner, "hand_points": hand_points}


def hand(
    deal: list[list[list[int]]],
    events: list[dict[str, Any]],
    outcome: dict[str, Any],
    scores: list[int],
    drawn_first: tuple[list[int], ...] = (),
) -> dict[str, Any]:
    """A hand whose boneyard starts with ``drawn_first``, then the other tiles in order."""
    used = {tuple(sorted(tile)) for seat in deal for tile in seat}
    used |= {tuple(sorted(tile)) for tile in drawn_first}
    rest = [list(tile) for tile in ALL_TILES if tile not in used]
    return {
        "leader": events[0]["seat"],
        "deal": deal,
        "boneyard": [list(tile) for tile in drawn_first] + rest,
        "events": events,
        "result": outcome,
        "scores": scores,
    }


def game(
    game_rules: dict[str, Any],
    hands: list[dict[str, Any]],
    winner: int | None = None,
    truncated: bool | None = None,
) -> dict[str, Any]:
    """A record; without a winner, a game as long as max_hands is truncated."""
    if truncated is None:
        truncated = winner is None and len(hands) == game_rules["max_hands"]
    return {
        "format": "allfives-record/1",
        "rules": game_rules,
        "seed": 0,
        "agents": ["a"] * game_rules["players"],
        "hands": hands,
        "final_scores": hands[-1]["scores"],
        "winner": winner,
        "truncated": truncated,
    }


def single(
    game_rules: dict[str, Any],
    deal: list[list[list[int]]],
    events: list[dict[str, Any]],
    outcome: dict[str, Any],
    scores: list[int],
    drawn_first: tuple[list[int], ...] = (),
    winner: int | None = None,
) -> dict[str, Any]:
    """A one-hand game."""
    return game(game_rules, [hand(deal, events, outcome, scores, drawn_first)], winner)


def assert_rejected(record: dict[str, Any], *words: str) -> None:
    errors = check_record(record)
    assert errors, "the checker accepted a wrong record"
    text = " | ".join(errors)
    for word in words:
        assert word in text, text


def changed(record: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``record`` with the item at ``path`` replaced by ``value``."""
    out = copy.deepcopy(record)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


# --- seed 002's worked examples --------------------------------------------------------------
# Two tiles each; after the scoring play nobody can play and the boneyard is all in reserve,
# so the hand is blocked and the side with fewer pips collects the other's, rounded.

R2 = rules(hand_size=2)

SEED_002_EXAMPLES = {
    # ends 5 and 3, [3,0] on the 3: 5 + 0 = 5. Blocked: 12 pips vs 3, seat 1 takes 10.
    "ends 5,3 play [3,0]": single(
        R2,
        [[[3, 5], [6, 6]], [[0, 3], [1, 2]]],
        [play(0, [5, 3], "lead", 0), play(1, [3, 0], "right", 5)],
        result("blocked", 1, [0, 10]),
        [0, 15],
    ),
    # ends 6 and 1, [1,4] on the 1: 6 + 4 = 10. Blocked: 4 pips vs 6, seat 0 takes 5.
    "ends 6,1 play [1,4]": single(
        R2,
        [[[1, 6], [2, 2]], [[1, 4], [3, 3]]],
        [play(0, [6, 1], "lead", 0), play(1, [1, 4], "right", 10)],
        result("blocked", 0, [5, 0]),
        [5, 10],
    ),
    # ends 4 and 3, the double [3,3] on the 3: 4 + 6 = 10. Blocked: 3 pips vs 7.
    "ends 4,3 play [3,3]": single(
        R2,
        [[[3, 4], [1, 2]], [[3, 3], [2, 5]]],
        [play(0, [4, 3], "lead", 0), play(1, [3, 3], "right", 10)],
        result("blocked", 0, [5, 0]),
        [5, 10],
    ),
    # ends 6 and 2, [2,5] on the 2: 6 + 5 = 11, no score. Blocked: 0 pips vs 2 (rounds to 0).
    "ends 6,2 play [2,5]": single(
        R2,
        [[[2, 6], [0, 0]], [[2, 5], [1, 1]]],
        [play(0, [6, 2], "lead", 0), play(1, [2, 5], "right", 0)],
        result("blocked", 0, [0, 0]),
        [0, 0],
    ),
    # lead [5,5] scores 10, then nobody can play: 1 pip vs 13, and 13 rounds to 15.
    "lead [5,5]": single(
        R2,
        [[[5, 5], [0, 1]], [[2, 3], [4, 4]]],
        [play(0, [5, 5], "lead", 10)],
        result("blocked", 0, [15, 0]),
        [25, 0],
    ),
}


@pytest.mark.parametrize("name", list(SEED_002_EXAMPLES))
def test_seed_002_examples(name: str) -> None:
    assert check_record(SEED_002_EXAMPLES[name]) == []


@pytest.mark.parametrize("name", list(SEED_002_EXAMPLES))
def test_seed_002_examples_reject_other_points(name: str) -> None:
    record = SEED_002_EXAMPLES[name]
    last = len(record["hands"][0]["events"]) - 1
    wrong = record["hands"][0]["events"][last]["points"] + 5
    assert_rejected(changed(record, ("hands", 0, "events", last, "points"), wrong), "points")


def test_round5() -> None:
    expected = {0: 0, 1: 0, 2: 0, 3: 5, 4: 5, 7: 5, 8: 10, 12: 10, 13: 15, 15: 15}
    assert {pips: round5(pips) for pips in expected} == expected


# --- the spinner -----------------------------------------------------------------------------

# Lead [5,5] is the spinner; left, right, then up and down: four open ends.
SPINNER_LEAD = single(
    rules(),
    [[[5, 5], [3, 5], [1, 5]], [[2, 5], [4, 5], [6, 6]]],
    [
        play(0, [5, 5], "lead", 10),  # lone lead: 10
        play(1, [5, 2], "left", 0),  # 2 + 10 (right side bare) = 12
        play(0, [5, 3], "right", 5),  # 2 + 3 = 5; up and down open now
        play(1, [5, 4], "up", 0),  # 2 + 3 + 4 = 9
        play(0, [5, 1], "down", 10),  # 2 + 3 + 4 + 1 = 10; seat 0 dominoes
    ],
    result("domino", 0, [10, 0]),  # seat 1 holds [6,6]: 12 -> 10
    [35, 0],
)

# Lead [1,3]; the first double [3,3] comes later on the right arm and is the spinner.
SPINNER_LATER = single(
    rules(),
    [[[1, 3], [3, 4], [3, 5]], [[3, 3], [0, 3], [2, 6]]],
    [
        play(0, [1, 3], "lead", 0),  # 4
        play(1, [3, 3], "right", 0),  # 1 + 6 = 7
        play(0, [3, 4], "right", 5),  # 1 + 4 = 5; up and down open now
        play(1, [3, 0], "up", 5),  # 1 + 4 + 0 = 5
        play(0, [5, 3], "down", 10),  # 1 + 4 + 0 + 5 = 10; seat 0 dominoes
    ],
    result("domino", 0, [10, 0]),  # seat 1 holds [2,6]: 8 -> 10
    [25, 5],
)


def test_spinner_lead_reaches_four_arms() -> None:
    assert check_record(SPINNER_LEAD) == []


def test_spinner_played_later() -> None:
    assert check_record(SPINNER_LATER) == []


def test_up_is_closed_until_both_sides_are_covered() -> None:
    bad = changed(SPINNER_LEAD, ("hands", 0, "events", 2), play(0, [5, 3], "up", 5))
    assert_rejected(bad, "not open")


def test_no_spinner_without_the_rule() -> None:
    # Same events, spinner off: [3,3] is an ordinary double and up never opens, so after
    # event 2 (ends 1 and 4) nobody can play: the hand is blocked there.
    bad = changed(SPINNER_LATER, ("rules", "spinner"), False)
    assert_rejected(bad, "event 3: the hand is already over (blocked)")


def test_without_spinner_a_lead_double_still_counts_while_exposed() -> None:
    record = single(
        rules(hand_size=2, spinner=False),
        [[[5, 5], [3, 5]], [[2, 5], [6, 6]]],
        [
            play(0, [5, 5], "lead", 10),
            play(1, [5, 2], "left", 0),  # 2 + 10 = 12
            play(0, [5, 3], "right", 5),  # 2 + 3; seat 0 dominoes
        ],
        result("domino", 0, [10, 0]),  # seat 1 holds [6,6]: 12 -> 10
        [25, 0],
    )
    assert check_record(record) == []


def test_only_the_first_double_is_a_spinner() -> None:
    # [3,3] is the spinner, its outer side still bare; [1,1] on the left is an ordinary double,
    # so covering it opens nothing, and the hand is blocked.
    record = single(
        rules(),
        [[[1, 3], [1, 1], [1, 5]], [[3, 3], [1, 4], [5, 6]]],
        [
            play(0, [1, 3], "lead", 0),  # 4
            play(1, [3, 3], "right", 0),  # 1 + 6 = 7
            play(0, [1, 1], "left", 0),  # 2 + 6 = 8
            play(1, [1, 4], "left", 10),  # 4 + 6 = 10; blocked: 6 pips vs 11
        ],
        result("blocked", 0, [10, 0]),
        [10, 10],
    )
    assert check_record(record) == []
    events = record["hands"][0]["events"]
    on_up = changed(record, ("hands", 0, "events"), [*events, play(0, [1, 5], "up", 0)])
    assert_rejected(on_up, "already over (blocked)")


# --- drawing ---------------------------------------------------------------------------------

# Seat 1 cannot follow [6,6]: it draws [1,2] (no use), then [3,6], which it plays at once.
FORCED_DRAW = single(
    rules(hand_size=2, hand_end="subtract_own", boneyard_reserve=0),
    [[[6, 6], [3, 4]], [[0, 1], [0, 2]]],
    [
        play(0, [6, 6], "lead", 0),  # 12
        draw(1, [1, 2]),
        draw(1, [3, 6]),
        play(1, [6, 3], "left", 15),  # 3 + 12 = 15
        play(0, [3, 4], "left", 0),  # 4 + 12 = 16; seat 0 dominoes
    ],
    result("domino", 0, [0, -5]),  # seat 1 keeps [0,1] [0,2] [1,2]: 6 -> 5
    [0, 10],
    drawn_first=([1, 2], [3, 6]),
)


def test_forced_draw() -> None:
    assert check_record(FORCED_DRAW) == []


def test_draw_out_of_order_is_rejected() -> None:
    bad = changed(FORCED_DRAW, ("hands", 0, "events", 1), draw(1, [3, 6]))
    assert_rejected(bad, "next boneyard tile is [1,2]")


def test_drawn_playable_tile_must_be_played_at_once() -> None:
    events = FORCED_DRAW["hands"][0]["events"]
    bad = changed(FORCED_DRAW, ("hands", 0, "events"), [*events[:3], draw(1, [0, 3])])
    assert_rejected(bad, "at once")


def test_draw_with_a_legal_play_is_rejected() -> None:
    events = FORCED_DRAW["hands"][0]["events"]
    bad = changed(FORCED_DRAW, ("hands", 0, "events"), [*events[:4], draw(0, [0, 0])])
    assert_rejected(bad, "draws although it has a legal play")


def test_pass_while_boneyard_can_give_is_rejected() -> None:
    bad = changed(FORCED_DRAW, ("hands", 0, "events", 1), pass_(1))
    assert_rejected(bad, "boneyard can still give")


# One tile may be drawn (23 of 24 in reserve). Seat 1 draws [1,2], useless; it passes, and
# that pass blocks the hand. Seat 1 has 6 pips against seat 0's 7 and takes 5.
RESERVE = single(
    rules(hand_size=2, boneyard_reserve=23),
    [[[6, 6], [3, 4]], [[0, 1], [0, 2]]],
    [play(0, [6, 6], "lead", 0), draw(1, [1, 2]), pass_(1)],
    result("blocked", 1, [0, 5]),
    [0, 5],
    drawn_first=([1, 2], [3, 6]),
)


def test_reserve_tiles_are_never_drawn() -> None:
    assert check_record(RESERVE) == []
    events = RESERVE["hands"][0]["events"]
    extra = [*events[:2], draw(1, [3, 6])]
    assert_rejected(changed(RESERVE, ("hands", 0, "events"), extra), "can give no more")


def test_block_is_declared_without_extra_passes() -> None:
    events = RESERVE["hands"][0]["events"]
    extra = changed(RESERVE, ("hands", 0, "events"), [*events, pass_(0)])
    assert_rejected(extra, "already over")
    seed = SEED_002_EXAMPLES["lead [5,5]"]
    lead = seed["hands"][0]["events"][0]
    passes = changed(seed, ("hands", 0, "events"), [lead, pass_(1), pass_(0)])
    assert_rejected(passes, "event 1: the hand is already over (blocked)")


def test_hand_may_not_stop_early() -> None:
    events = FORCED_DRAW["hands"][0]["events"]
    short = changed(FORCED_DRAW, ("hands", 0, "events"), events[:4])
    assert_rejected(short, "stop before the hand is over")


# --- blocked hands ---------------------------------------------------------------------------


def blocked_game(hand_end: str, *hand_args: Any) -> dict[str, Any]:
    """A one-hand game of two tiles each, with the whole boneyard in reserve."""
    return single(rules(hand_size=2, hand_end=hand_end), *hand_args)


def test_blocked_fewest_tiles_breaks_equal_pips() -> None:
    # After the lead both hold 5 pips; seat 0 has one tile, seat 1 two: seat 0 takes 5.
    record = blocked_game(
        "winner_collects",
        [[[6, 6], [0, 5]], [[1, 2], [0, 2]]],
        [play(0, [6, 6], "lead", 0)],
        result("blocked", 0, [5, 0]),
        [5, 0],
    )
    assert check_record(record) == []


def test_blocked_full_tie_scores_nothing() -> None:
    # 3 pips and one tile each: nobody wins, nobody scores.
    record = blocked_game(
        "winner_collects",
        [[[6, 6], [0, 3]], [[4, 6], [1, 2]]],
        [play(0, [6, 6], "lead", 0), play(1, [6, 4], "left", 0)],  # 4 + 12 = 16
        result("blocked", None, [0, 0]),
        [0, 0],
    )
    assert check_record(record) == []
    wrong = changed(record, ("hands", 0, "result", "winner"), 0)
    assert_rejected(wrong, "result winner")


def test_blocked_subtract_own() -> None:
    # Everyone loses its own rounded pips: 3 -> 5 and 13 -> 15; scores go below zero.
    record = blocked_game(
        "subtract_own",
        [[[5, 5], [1, 2]], [[6, 6], [0, 1]]],
        [play(0, [5, 5], "lead", 10)],
        result("blocked", None, [-5, -15]),
        [5, -15],
    )
    assert check_record(record) == []


# --- hand end: roundings, teams --------------------------------------------------------------


def three_player_domino(rounding: str, gain: int) -> dict[str, Any]:
    # Seat 0 leads its only tile [5,5] for 10 and dominoes; seats 1 and 2 hold 4 and 3 pips.
    return single(
        rules(players=3, hand_size=1, rounding=rounding),
        [[[5, 5]], [[1, 3]], [[0, 3]]],
        [play(0, [5, 5], "lead", 10)],
        result("domino", 0, [gain, 0, 0]),
        [10 + gain, 0, 0],
    )


def test_rounding_per_hand() -> None:
    assert check_record(three_player_domino("per_hand", 10)) == []  # 5 + 5
    assert_rejected(three_player_domino("per_hand", 5), "hand_points")


def test_rounding_total() -> None:
    assert check_record(three_player_domino("total", 5)) == []  # 4 + 3 = 7 -> 5
    assert_rejected(three_player_domino("total", 10), "hand_points")


TEAM_DEAL = [[[5, 5], [0, 2]], [[0, 5], [6, 6]], [[4, 5], [2, 6]], [[1, 4], [3, 4]]]
TEAM_EVENTS = [
    play(0, [5, 5], "lead", 10),
    play(1, [5, 0], "left", 10),  # 0 + 10
    play(2, [5, 4], "right", 0),  # 0 + 4
    play(3, [4, 1], "right", 0),  # 0 + 1
    play(0, [0, 2], "left", 0),  # 2 + 1 = 3; seat 0 dominoes for side 0
]


def test_teams_winner_collects() -> None:
    # Side 0 takes seat 1's [6,6] (12 -> 10) and seat 3's [3,4] (7 -> 5), not seat 2's.
    record = single(
        rules(players=4, teams=True, hand_size=2),
        TEAM_DEAL,
        TEAM_EVENTS,
        result("domino", 0, [15, 0]),
        [25, 10],
    )
    assert check_record(record) == []


def test_teams_subtract_own() -> None:
    # Side 0 loses seat 2's [2,6] (8 -> 10); side 1 loses 10 + 5.
    record = single(
        rules(players=4, teams=True, hand_size=2, hand_end="subtract_own"),
        TEAM_DEAL,
        TEAM_EVENTS,
        result("domino", 0, [-10, -15]),
        [0, -5],
    )
    assert check_record(record) == []


def test_teams_need_four_players() -> None:
    assert_rejected(changed(FORCED_DRAW, ("rules", "teams"), True), "teams needs 4 players")


# --- leaders, several hands, the end of the game ---------------------------------------------

# Highest double leads; then the seat that dominoed. Target 25 is reached after hand 1.
LEADERS = game(
    rules(hand_size=1, first_leader="highest_double", target=25, max_hands=5),
    [
        hand(
            [[[2, 2]], [[4, 4]]],
            [play(1, [4, 4], "lead", 0)],  # [2,2]: 4 -> 5
            result("domino", 1, [0, 5]),
            [0, 5],
        ),
        hand(
            [[[6, 6]], [[5, 5]]],
            [play(1, [5, 5], "lead", 10)],  # [6,6]: 12 -> 10
            result("domino", 1, [0, 10]),
            [0, 25],
        ),
    ],
    winner=1,
)


def test_leaders_and_end_of_hand_target() -> None:
    assert check_record(LEADERS) == []


def test_highest_double_must_lead() -> None:
    swapped = changed(LEADERS, ("hands", 0, "deal"), [[[4, 4]], [[2, 2]]])
    assert_rejected(swapped, "leader 1, expected 0")


def test_hand_winner_leads_next_hand() -> None:
    # Hand 1 led by seat 0 although seat 1 dominoed hand 0.
    bad = changed(
        LEADERS,
        ("hands", 1),
        hand(
            [[[5, 5]], [[6, 6]]],
            [play(0, [5, 5], "lead", 10)],
            result("domino", 0, [10, 0]),
            [20, 5],
        ),
    )
    assert_rejected(bad, "hand 1: leader 0, expected 1")


def test_heaviest_tile_leads_without_doubles() -> None:
    # No double dealt; [1,6], [2,5] and [3,4] weigh 7, and [1,6] has the highest half.
    deal = [[[3, 4], [0, 2]], [[1, 6], [2, 5]]]
    game_rules = rules(hand_size=2, first_leader="highest_double")
    right = single(
        game_rules,
        deal,
        [play(1, [6, 1], "lead", 0)],  # blocked: 9 pips vs 7, seat 1 takes 10
        result("blocked", 1, [0, 10]),
        [0, 10],
    )
    assert check_record(right) == []
    wrong = single(
        game_rules,
        deal,
        [play(0, [3, 4], "lead", 0)],  # blocked: 2 pips vs 14, seat 0 takes 15
        result("blocked", 0, [15, 0]),
        [15, 0],
    )
    assert_rejected(wrong, "leader 0, expected 1", "lead must be [1,6]")


def test_immediate_target_ends_mid_hand() -> None:
    record = single(
        rules(hand_size=2, target=10),
        [[[5, 5], [0, 1]], [[2, 3], [4, 4]]],
        [play(0, [5, 5], "lead", 10)],
        result("target", 0, [0, 0]),
        [10, 0],
        winner=0,
    )
    assert check_record(record) == []
    assert_rejected(changed(record, ("winner",), None), "winner is None, expected 0")


def test_domino_that_reaches_the_target_ends_by_target() -> None:
    # Seat 0 leads its only tile for 10 = target: the game ends at once, before the
    # end-of-hand scoring a domino would have brought.
    record = single(
        rules(hand_size=1, target=10),
        [[[5, 5]], [[6, 6]]],
        [play(0, [5, 5], "lead", 10)],
        result("target", 0, [0, 0]),
        [10, 0],
        winner=0,
    )
    assert check_record(record) == []


def test_after_a_block_the_highest_double_leads_again() -> None:
    game_rules = rules(hand_size=2, first_leader="highest_double", max_hands=2)
    blocked = hand(  # 1 pip vs 10: seat 0 takes 10
        [[[6, 6], [0, 1]], [[2, 3], [1, 4]]],
        [play(0, [6, 6], "lead", 0)],
        result("blocked", 0, [10, 0]),
        [10, 0],
    )
    next_deal = [[[1, 2], [0, 3]], [[4, 4], [0, 5]]]
    right = hand(  # [4,4] leads for 8; blocked, 6 pips vs 5: seat 1 takes 5
        next_deal, [play(1, [4, 4], "lead", 0)], result("blocked", 1, [0, 5]), [10, 5]
    )
    assert check_record(game(game_rules, [blocked, right])) == []
    wrong = hand(  # led by the blocked hand's winner; blocked, 3 pips vs 13: seat 0 takes 15
        next_deal, [play(0, [1, 2], "lead", 0)], result("blocked", 0, [15, 0]), [25, 0]
    )
    assert_rejected(game(game_rules, [blocked, wrong]), "hand 1: leader 0, expected 1")


END_OF_HAND_HANDS = [
    # 10 each in play, then blocked at 4 pips and one tile each: a tie at the top, play on.
    hand(
        [[[5, 5], [1, 3]], [[0, 5], [2, 2]]],
        [play(0, [5, 5], "lead", 10), play(1, [5, 0], "left", 10)],  # 0 + 10
        result("blocked", None, [0, 0]),
        [10, 10],
    ),
    # After a block the first-hand rule (random) picks the leader. 1 pip vs 10: seat 0 wins.
    hand(
        [[[6, 6], [0, 1]], [[2, 3], [1, 4]]],
        [play(0, [6, 6], "lead", 0)],
        result("blocked", 0, [10, 0]),
        [20, 10],
    ),
]


def test_end_of_hand_tie_at_the_top_plays_on() -> None:
    record = game(
        rules(hand_size=2, target=10, win_check="end_of_hand", max_hands=3),
        END_OF_HAND_HANDS,
        winner=0,
    )
    assert check_record(record) == []


def test_immediate_target_would_have_ended_the_game() -> None:
    record = game(rules(hand_size=2, target=10, max_hands=3), END_OF_HAND_HANDS, winner=0)
    assert_rejected(record, "hand 0 event 1: the hand is already over (target)")


def test_truncated_after_max_hands() -> None:
    record = game(
        rules(hand_size=2, target=50, win_check="end_of_hand", max_hands=2),
        END_OF_HAND_HANDS,
    )
    assert record["truncated"] is True
    assert check_record(record) == []
    assert_rejected(changed(record, ("truncated",), False), "truncated is False")
    unfinished = changed(record, ("rules", "max_hands"), 3)
    assert_rejected(unfinished, "the game is not over")


def test_hands_after_the_game_is_over() -> None:
    record = game(
        rules(hand_size=2, target=10, win_check="end_of_hand", max_hands=1),
        END_OF_HAND_HANDS,
    )
    assert_rejected(record, "already over")


# --- records that are wrong in one detail ----------------------------------------------------


def test_bad_points() -> None:
    assert_rejected(changed(SPINNER_LEAD, ("hands", 0, "events", 1, "points"), 12), "points")


def test_tile_not_held() -> None:
    bad = changed(SPINNER_LEAD, ("hands", 0, "events", 1), play(1, [5, 6], "left", 0))
    assert_rejected(bad, "does not hold")


def test_tile_not_matching_its_end() -> None:
    bad = changed(SPINNER_LATER, ("hands", 0, "events", 2), play(0, [3, 4], "left", 5))
    assert_rejected(bad, "does not match the left end (1)")


def test_wrong_turn() -> None:
    bad = changed(SPINNER_LEAD, ("hands", 0, "events", 1, "seat"), 0)
    assert_rejected(bad, "seat 1's turn")


def test_pass_with_a_legal_play() -> None:
    bad = changed(SPINNER_LEAD, ("hands", 0, "events", 1), pass_(1))
    assert_rejected(bad, "passes although it has a legal play")


def test_wrong_scores() -> None:
    assert_rejected(changed(SPINNER_LEAD, ("hands", 0, "scores"), [35, 5]), "scores")


def test_wrong_final_scores() -> None:
    assert_rejected(changed(SPINNER_LEAD, ("final_scores",), [30, 0]), "final_scores")


def test_wrong_hand_points_and_reason() -> None:
    assert_rejected(
        changed(SPINNER_LEAD, ("hands", 0, "result", "hand_points"), [5, 0]),
        "hand_points",
    )
    assert_rejected(changed(SPINNER_LEAD, ("hands", 0, "result", "reason"), "blocked"), "reason")


def test_deal_must_be_the_28_tiles() -> None:
    duplicated = changed(SPINNER_LEAD, ("hands", 0, "deal", 1, 2), [5, 5])
    assert_rejected(duplicated, "twice ['[5,5]']", "missing ['[6,6]']")
    short = changed(SPINNER_LEAD, ("hands", 0, "deal", 1), [[2, 5], [4, 5]])
    assert_rejected(short, "must be dealt 3 tiles")


def test_rules_must_be_resolved_and_complete() -> None:
    assert_rejected(changed(SPINNER_LEAD, ("rules", "hand_size"), {"2": 3}), "hand_size")
    missing = copy.deepcopy(SPINNER_LEAD)
    del missing["rules"]["max_hands"]
    assert_rejected(missing, "missing keys ['max_hands']")


def test_lead_orientation_matters() -> None:
    # Lead [3,1] puts the 3 on the left: [3,3] on the right no longer matches.
    bad = changed(SPINNER_LATER, ("hands", 0, "events", 0), play(0, [3, 1], "lead", 0))
    assert_rejected(bad, "does not match the right end (1)")
