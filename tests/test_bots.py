"""The baseline bots: legal play everywhere, determinism, and the pieces they are built from."""

from __future__ import annotations

import numpy as np
import pytest
from states import random_states

from allfives_agents.base import make_agent
from allfives_agents.rulebased.heuristic import DEFAULTS, expected_best
from allfives_env.game.engine import GameState
from allfives_env.game.gameconfig import GameConfig
from allfives_env.game.match import play_game
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import TILE_INDEX, action_id, str_to_action
from allfives_env.game.view import SeatView
from allfives_env.records.record import game_record, verify

FAST_IDS = ["random", "greedy", "heuristic", "search:sims=6,min_worlds=2"]
TABLES = [
    ("all_fives", 2, None), ("all_fives", 3, None), ("all_fives", 4, True),
    ("all_fives", 4, False), ("five_up", 2, None), ("five_up", 3, None), ("five_up", 4, True),
    ("muggins", 3, None), ("pagat", 2, None), ("pagat", 4, True),
]


@pytest.mark.parametrize("preset,players,teams", TABLES)
def test_every_bot_plays_only_legal_moves(preset: str, players: int, teams: bool | None) -> None:
    rules = GameConfig(preset, players, teams, overrides={"target": 60}).rules
    for shift in range(len(FAST_IDS)):  # every bot in every seat across the rotations
        ids = [FAST_IDS[(shift + s) % len(FAST_IDS)] for s in range(players)]
        agents = [make_agent(i, seed=s) for s, i in enumerate(ids)]
        state = play_game(rules, agents, seed=17 + shift, log=True)  # raises on illegal
        assert state.game_over
        verify(game_record(state, 17 + shift, ids))


def test_search_default_budget_plays_legal_moves_to_the_end() -> None:
    rules = make_rules("all_fives", target=80)
    state = play_game(rules, [make_agent("search", 1), make_agent("greedy", 2)], seed=4,
                      log=True)
    assert state.game_over
    verify(game_record(state, 4, ["search", "greedy"]))


@pytest.mark.parametrize("agent_id", FAST_IDS)
def test_same_seed_same_game(agent_id: str) -> None:
    rules = make_rules("five_up", players=3, target=80)

    def record(seed: int) -> dict:
        agents = [make_agent(agent_id, seed=seed + s) for s in range(3)]
        return game_record(play_game(rules, agents, seed=seed, log=True), seed, [agent_id] * 3)

    assert record(5) == record(5)
    if agent_id != "greedy":  # greedy and heuristic are deterministic given the deal
        assert record(5)["hands"] != record(6)["hands"]


def test_reset_reseeds() -> None:
    rules = make_rules("all_fives")
    g = GameState(rules, 3)
    view = SeatView.of(g, g.current)
    a = make_agent("random", seed=1)
    first = [a.act({}, view) for _ in range(20)]
    a.reset(1)
    assert [a.act({}, view) for _ in range(20)] == first


def test_expected_best_arithmetic() -> None:
    # two tiles scoring 10 and 5, each held with probability 1/2:
    # E[max] = 10 * 1/2 + 5 * 1/2 * 1/2 = 6.25; P(no play) = 1/4
    assert expected_best([5, 10], 0.5) == (6.25, 0.25)
    assert expected_best([5, 10], 1.0) == (10.0, 0.0)
    assert expected_best([], 0.3) == (0.0, 1.0)


def _state_with(rules_preset: str, hands: list[list[tuple[int, int]]], leader: int,
                **overrides: object) -> GameState:
    from allfives_env.game.engine import Deal

    rules = make_rules(rules_preset, **overrides)
    tiles = [[TILE_INDEX[t] for t in h] for h in hands]
    used = {t for h in tiles for t in h}
    boneyard = [t for t in range(28) if t not in used]
    return GameState(rules, 0, dealer=lambda k, rng: Deal(tiles, boneyard, leader))


@pytest.mark.parametrize("agent_id", ["heuristic", "search"])
def test_takes_the_winning_play(agent_id: str) -> None:
    g = _state_with("all_fives", [[(5, 5), (0, 1), (2, 3)], [(6, 6), (4, 6), (1, 2)]], 0,
                    hand_size=3)
    g.scores = [240, 0]  # [5,5] leads for 10 and reaches 250; [2,3] only scores 5
    view = SeatView.of(g, 0)
    assert make_agent(agent_id, 0).act({}, view) == action_id(TILE_INDEX[(5, 5)], 0)


def test_heuristic_avoids_setting_up_the_opponent() -> None:
    # Seat 0 leads [1,4] or [2,3], 5 points each; greedy takes [1,4] (higher half). Seat 1 is
    # known to lack 2, 3, 4 and 5, so it holds 2 of the 6 unseen tiles made of 0, 1 and 6:
    # after [1,4] it replies [1,6] for 10 with chance 1/3; after [2,3] it cannot play at all.
    g = _state_with("all_fives", [[(1, 4), (2, 3)], [(1, 6), (0, 0)]], 0, hand_size=2)
    g.lacks[1] = 0b0111100
    view = SeatView.of(g, 0)
    assert make_agent("greedy", 0).act({}, view) == str_to_action("1-4 lead")
    assert make_agent("heuristic", 0).act({}, view) == str_to_action("2-3 lead")


def test_options_are_checked() -> None:
    assert set(DEFAULTS) >= {"reply", "block", "pips"}
    with pytest.raises(ValueError, match="unknown option"):
        make_agent("heuristic:nope=1")
    with pytest.raises(ValueError, match="unknown option"):
        make_agent("search:width=3")
    with pytest.raises(ValueError, match="must be a number"):
        make_agent("heuristic:reply=lots")
    with pytest.raises(ValueError, match="sims"):
        make_agent("search:sims=0")
    assert make_agent("search:sims=300").sims == 300


def _state_with_lacks() -> GameState:
    """A 3-seat five_up state where seat 1 is known to lack 2, 3 and 6 (it drew)."""
    g = GameState(make_rules("five_up", players=3), 1, log=False)
    for _ in range(10):
        g.apply(g.legal_actions()[0])
    assert g.lacks[1] and not g.hand_over
    return g


def test_search_worlds_agree_with_the_view() -> None:
    from allfives_agents.planning.search import WorldSampler

    for g in [_state_with_lacks(), *random_states([make_rules("all_fives", players=4)], 20)]:
        view = SeatView.of(g, g.current)
        sampler = WorldSampler(view, np.random.default_rng(0))
        for _ in range(20):
            assert SeatView.of(sampler.sample(), view.seat) == view


def test_search_worlds_have_the_view_samplers_distribution() -> None:
    """The fast sampler draws hidden hands as SeatView.sample_state does (marginals per
    seat and tile within 4 standard errors), including a seat known to lack numbers."""
    from allfives_agents.planning.search import WorldSampler

    g = _state_with_lacks()
    view = SeatView.of(g, g.current)
    sampler, rng, n = WorldSampler(view, np.random.default_rng(0)), np.random.default_rng(1), 4000
    fast = np.zeros((3, 28))
    ref = np.zeros((3, 28))
    for _ in range(n):
        w, r = sampler.sample(), view.sample_state(rng)
        for s in range(3):
            fast[s] += [w.hands[s] >> t & 1 for t in range(28)]
            ref[s] += [r.hands[s] >> t & 1 for t in range(28)]
    p = (fast + ref) / (2 * n)
    se = np.sqrt(np.maximum(p * (1 - p), 1e-9) * 2 / n)
    assert np.all(np.abs(fast - ref) / n <= 4 * se + 1e-12)
