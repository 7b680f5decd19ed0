"""Random play: invariants at every step, and every record checked twice.

For each preset and seating (2, 3, 4 in teams, 4 each for themselves), games of uniformly
random legal play check at every step that the 28 tiles are all accounted for, that the seat to
act can act, that a play scores exactly what ``points_if`` said, a positive multiple of 5 or
nothing, and that scores move only by those points and the end-of-hand points. Every game ends,
and its record replays (``record.replay``) and passes the independent reference checker
(``tests/reference_checker.py``, written from docs/rules.md alone).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_checker import check_record

from allfives_agents.base import make_agent
from allfives_env.game.engine import Deal, GameState
from allfives_env.game.gameconfig import GameConfig
from allfives_env.game.match import game_seed, play_game
from allfives_env.game.rules import Rules, make_rules
from allfives_env.game.tiles import ALL_TILES_MASK, N_ENDS, N_TILES, round5
from allfives_env.records.record import game_record, replay

SEATINGS = [(2, None), (3, None), (4, True), (4, False)]
CONFIGS = [(preset, players, teams) for preset in ("all_fives", "five_up", "muggins", "pagat")
           for players, teams in SEATINGS]
IDS = [f"{p}-{n}{'' if t is None else ('-teams' if t else '-solo')}" for p, n, t in CONFIGS]


def check_tiles(state: GameState) -> None:
    """Hands, played tiles and the undrawn boneyard are disjoint and make the 28 tiles."""
    played = sum(1 << t for t, s in enumerate(state.played_by) if s >= 0)
    rest = sum(1 << t for t in state.boneyard[state.bone_pos:])
    parts = [*state.hands, played, rest]
    assert sum(p.bit_count() for p in parts) == N_TILES
    union = 0
    for p in parts:
        union |= p
    assert union == ALL_TILES_MASK
    assert state.n_played == played.bit_count()


def play_checked(rules: Rules, seed: int) -> GameState:
    """One game of random legal play, checking the invariants at every step."""
    rng = np.random.default_rng(seed)
    state = GameState(rules, seed=seed)
    while not state.game_over:
        if state.hand_over:
            state.next_hand()
            assert [h.bit_count() for h in state.hands] == [rules.hand_size] * rules.players
            continue
        check_tiles(state)
        legal = state.legal_actions()
        assert legal, "the seat to act must have a legal action"
        action = legal[int(rng.integers(len(legal)))]
        expected = state.points_if(action)
        seat, before, hand = state.current, state.scores[:], state.hand_index
        points = state.apply(action)
        assert points == expected
        assert points == 0 or (points > 0 and points % 5 == 0)
        moved = [a - b for a, b in zip(state.scores, before)]
        gained = [points if side == rules.side_of(seat) else 0 for side in range(rules.n_sides)]
        if state.hand_over:
            assert state.hand_index == hand
            assert moved == [g + h for g, h in zip(gained, state.hand_result["hand_points"])]
        else:
            assert moved == gained
    check_tiles(state)
    return state


def check_finished(state: GameState) -> None:
    rules = state.rules
    assert state.game_over and state.hand_over
    assert len(state.history) <= rules.max_hands
    if state.truncated:
        assert state.winner is None and len(state.history) == rules.max_hands
    else:
        assert state.scores[state.winner] >= rules.target
        assert state.scores[state.winner] == max(state.scores)
    for h in state.history:
        for p in h["result"]["hand_points"]:
            assert p % 5 == 0
        if rules.hand_end == "winner_collects":
            assert min(h["result"]["hand_points"]) >= 0


def check_record_both_ways(state: GameState, seed: int) -> dict:
    record = json.loads(json.dumps(game_record(state, seed=seed)))
    replayed = replay(record)
    assert replayed.scores == state.scores and replayed.winner == state.winner
    errors = check_record(record)
    assert errors == [], errors[:3]
    return record


def run_config(rules: Rules, hands: int, base: int, min_games: int = 10) -> int:
    """Random games until ``hands`` hands (and ``min_games`` games) were played; all checked.

    Budgets count hands, not games: a random all_fives game at 4 seats lasts ~65 hands, a
    muggins game ~3, so equal hand budgets keep every configuration's cost alike."""
    played = games = 0
    while played < hands or games < min_games:
        seed = game_seed(base, games)
        state = play_checked(rules, seed)
        check_finished(state)
        check_record_both_ways(state, seed)
        played += len(state.history)
        games += 1
    return games


@pytest.mark.parametrize(("players", "teams"), SEATINGS, ids=["2", "3", "4-teams", "4-solo"])
def test_random_games_quick(players: int, teams: bool | None) -> None:
    """The fast set's random play: every seating, 100 hands (the marked-slow tests below run
    every preset for thousands)."""
    run_config(GameConfig("all_fives", players, teams).rules, hands=100, base=3)


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players", "teams"), CONFIGS, ids=IDS)
def test_random_games(preset: str, players: int, teams: bool | None) -> None:
    run_config(GameConfig(preset, players, teams).rules, hands=1000, base=1)


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players", "teams"), CONFIGS, ids=IDS)
def test_random_games_many(preset: str, players: int, teams: bool | None) -> None:
    run_config(GameConfig(preset, players, teams).rules, hands=3000, base=2)


VARIANTS = [
    {"spinner": False},
    {"win_check": "end_of_hand"},
    {"win_check": "end_of_hand", "target": 50, "max_hands": 3},
    {"boneyard_reserve": 4},
    {"hand_size": 3, "boneyard_reserve": 10},
    {"rounding": "total", "hand_end": "winner_collects"},
    {"next_leader": "random"},
    {"first_leader": "highest_double", "next_leader": "highest_double"},
]


@pytest.mark.slow
@pytest.mark.parametrize("overrides", VARIANTS, ids=[str(v) for v in VARIANTS])
@pytest.mark.parametrize(("players", "teams"), SEATINGS, ids=["2", "3", "4-teams", "4-solo"])
def test_random_games_rule_variants(overrides: dict, players: int, teams: bool | None) -> None:
    rules = GameConfig("all_fives", players, teams, overrides=overrides).rules
    run_config(rules, hands=150, base=3, min_games=3)


@pytest.mark.parametrize(("preset", "players"), [("five_up", 2), ("all_fives", 4),
                                                 ("muggins", 3)])
def test_same_seed_same_record(preset: str, players: int) -> None:
    rules = make_rules(preset, players=players)

    def record(seed: int) -> str:
        agents = [make_agent(a, seed=99) for a in ["random", "greedy"] * 2][:players]
        state = play_game(rules, agents, seed)
        return json.dumps(game_record(state, seed=seed, agents=[a.name for a in agents]))

    first = [record(game_seed(7, k)) for k in range(5)]
    assert first == [record(game_seed(7, k)) for k in range(5)]
    assert len(set(first)) == 5  # different seeds, different games


# ------------------------------------------------------------------ hypothesis properties
@st.composite
def deals(draw: st.DrawFn) -> tuple[Rules, Deal]:
    players = draw(st.sampled_from([2, 3, 4]))
    size = draw(st.integers(1, 28 // players))
    spinner = draw(st.booleans())
    reserve = draw(st.integers(0, 28 - players * size))
    order = draw(st.permutations(range(N_TILES)))
    rules = make_rules("pagat", players=players, hand_size=size, spinner=spinner,
                       boneyard_reserve=reserve, max_hands=1)
    hands = [list(order[s * size:(s + 1) * size]) for s in range(players)]
    return rules, Deal(hands, list(order[players * size:]), leader=draw(st.integers(0, 3)) %
                       players)


@given(deals(), st.randoms(use_true_random=False))
def test_random_hand_from_any_deal(dealt: tuple[Rules, Deal], rnd: object) -> None:
    rules, deal = dealt
    state = GameState(rules, seed=0, dealer=lambda _k, _rng: deal)
    assert state.leader == deal.leader
    while not state.hand_over:
        check_tiles(state)
        legal = state.legal_actions()
        action = rnd.choice(legal)  # type: ignore[attr-defined]
        twin = state.copy()
        snapshot = (state.hands[:], state.scores[:], state.ends[:], state.cnt[:], state.current)
        assert twin.apply(action) == state.points_if(action)  # the copy moves alone
        assert snapshot == (state.hands[:], state.scores[:], state.ends[:], state.cnt[:],
                            state.current)
        state.apply(action)
        assert twin.scores == state.scores and twin.hands == state.hands
    check_tiles(state)
    result = state.hand_result
    assert result["reason"] in ("domino", "blocked", "target")
    if result["reason"] == "domino":
        assert any(h == 0 for h in state.hands)
    elif result["reason"] == "blocked":
        assert state.legal_actions() == []
        open_m = state.open_mask()
        assert not any(h & open_m for h in state.hands)
        assert state.bone_pos == len(state.boneyard) - rules.boneyard_reserve
    assert check_record(json.loads(json.dumps(game_record(state, seed=0)))) == []


@given(st.integers(0, 10_000))
def test_pips_rounding(pips: int) -> None:
    r = round5(pips)
    assert r % 5 == 0 and abs(r - pips) <= 2
    assert r == 5 * round(pips / 5)  # no .5 ties: pips are whole


@given(st.integers(0, 2**32 - 1), st.integers(0, 10**6))
def test_game_seeds_are_stable(seed: int, index: int) -> None:
    assert game_seed(seed, index) == game_seed(seed, index)
    assert 0 <= game_seed(seed, index) < 2**32


def test_actions_name_tiles_and_ends() -> None:
    assert all(0 <= a // N_ENDS < N_TILES for a in range(N_TILES * N_ENDS))
