"""The OpenSpiel game ``allfives``: the same game as the engine, OpenSpiel's own checks, records.

The differential test deals every hand from one seeded permutation: the OpenSpiel game gets
it as chance outcomes (deal tile by tile, draws in boneyard order, the leader), the engine
gets it through its ``dealer`` hook; both get the same random plays. Legal moves, the seat to
act, scores, events (points included), results, the winner and the records must agree.
``ALLFIVES_OPENSPIEL_GAMES`` sets the games per configuration (default 30).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from allfives_env.game.engine import Deal, GameState  # noqa: E402
from allfives_env.game.rules import PRESETS, RulesError  # noqa: E402
from allfives_env.records.record import game_record, replay  # noqa: E402
from allfives_env.spiel import openspiel as aos  # noqa: E402
from allfives_env.spiel.openspiel_core import Match  # noqa: E402
from allfives_env.spiel.openspiel_resample import FALLBACKS  # noqa: E402

SEATINGS = [(2, False), (3, False), (4, True), (4, False)]
CONFIGS = [(preset, p, t) for preset in PRESETS for p, t in SEATINGS]
GAMES = int(os.environ.get("ALLFIVES_OPENSPIEL_GAMES", "30"))


def load(preset: str, players: int, teams: bool, **extra: object) -> Any:
    params = {"preset": preset, "players": players, "teams": teams, **extra}
    return pyspiel.load_game(aos.GAME_NAME, params)


class Deals:
    """Per hand, one seeded permutation of the 28 tiles and a leader."""

    def __init__(self, rules, seed: int) -> None:
        self.rules, self.rng = rules, np.random.default_rng(seed)
        self.cache: list[Deal] = []

    def __call__(self, k: int, _rng=None) -> Deal:
        while len(self.cache) <= k:
            order = self.rng.permutation(28).tolist()
            h, n = self.rules.hand_size, self.rules.players
            self.cache.append(Deal([order[s * h:(s + 1) * h] for s in range(n)], order[n * h:],
                                   int(self.rng.integers(n))))
        return self.cache[k]


def play_both(game: Any, seed: int) -> tuple[Any, GameState]:
    """One game on both sides, checked step by step."""
    rules = game.rules
    deals = Deals(rules, seed)
    engine = GameState(rules, dealer=deals)
    state = game.new_initial_state()
    rng = np.random.default_rng(seed + 1)
    draws = 0
    while not state.is_terminal():
        if state.is_chance_node():
            m = state.match
            deal = deals(len(m.deals))  # the hand being dealt or played
            outcome: int | None
            if m.phase == aos.DEAL:
                outcome = [t for h in deal.hands for t in h][len(m.dealing_flat())]
            elif m.phase == aos.LEADER:
                outcome = deal.leader
            else:
                outcome = deal.boneyard[len(m.bones.drawn)]
                draws += 1
            assert outcome in dict(state.chance_outcomes())
            state.apply_action(outcome)
            continue
        if engine.hand_over:
            engine.next_hand()
        assert state.current_player() == engine.current
        legal = engine.legal_actions()
        assert state.legal_actions() == legal
        action = legal[int(rng.integers(len(legal)))]
        engine.play(action)
        state.apply_action(action)
        if not state.is_chance_node():
            assert state.match.game.scores == engine.scores
    assert engine.game_over
    return state, engine


def expected_returns(engine: GameState, reward: str) -> list[float]:
    rules = engine.rules
    if reward == "points":
        mean = sum(engine.scores) / rules.n_sides
        return [(engine.scores[rules.side_of(s)] - mean) / rules.target
                for s in range(rules.players)]
    if engine.winner is None:
        return [0.0] * rules.players
    return [1.0 if rules.side_of(s) == engine.winner else -1.0 / (rules.n_sides - 1)
            for s in range(rules.players)]


def same_records(ours: dict, theirs: dict) -> None:
    """Records agree, except the undrawn tail of each boneyard (chance never chose it)."""
    for h in ours["hands"] + theirs["hands"]:
        drawn = sum(1 for e in h["events"] if e["type"] == "draw")
        h["boneyard"] = h["boneyard"][:drawn]
    assert ours == theirs


@pytest.mark.slow
@pytest.mark.parametrize("preset,players,teams", CONFIGS)
def test_same_game_as_engine(preset: str, players: int, teams: bool) -> None:
    game = load(preset, players, teams, reward="points" if players == 3 else "win")
    for g in range(GAMES):
        state, engine = play_both(game, 1000 * players + g)
        assert state.returns() == pytest.approx(expected_returns(engine, game.reward))
        assert abs(sum(state.returns())) < 1e-9
        record = state.record(agents=["random"] * players)
        replay(record)
        same_records(record, game_record(engine, agents=["random"] * players))


@pytest.mark.parametrize("extra", [
    {"boneyard_reserve": 3, "win_check": "end_of_hand", "spinner": False,
     "next_leader": "random", "target": 80},
    {"hand_size": 4, "first_leader": "highest_double", "next_leader": "hand_winner",
     "hand_end": "winner_collects", "rounding": "total", "max_hands": 3}])
def test_same_game_with_overrides(extra: dict) -> None:
    for players, teams in SEATINGS:
        game = load("all_fives", players, teams, **extra)
        for g in range(4):
            state, engine = play_both(game, 7 * players + g)
            replay(state.record())
            same_records(state.record(), game_record(engine))


def test_rule_options_and_errors() -> None:
    game = pyspiel.load_game("allfives(players=4,teams=True,preset=five_up)")
    assert game.rules.teams and game.rules.preset == "five_up" and game.num_players() == 4
    game = pyspiel.load_game("allfives(players=3,hand_size=5,target=60,win_check=end_of_hand,"
                             "first_leader=random,next_leader=random,spinner=False,"
                             "hand_end=winner_collects,rounding=total,boneyard_reserve=2,"
                             "max_hands=3)")
    r = game.rules
    assert (r.hand_size, r.target, r.win_check, r.spinner, r.boneyard_reserve, r.max_hands) == (
        5, 60, "end_of_hand", False, 2, 3)
    assert game.num_distinct_actions() == 140 and game.max_chance_outcomes() == 28
    assert game.max_game_length() == 3 * 26
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    for bad in ("allfives(players=2,hand_size=15)", "allfives(win_check=never)",
                "allfives(reward=money)", "allfives(preset=chess)"):
        with pytest.raises((RulesError, pyspiel.SpielError, RuntimeError), match="allowed|needs|"
                           "preset"):
            pyspiel.load_game(bad)


@pytest.mark.parametrize("preset,players,teams", CONFIGS)
def test_random_sim_test(preset: str, players: int, teams: bool) -> None:
    game = load(preset, players, teams, target=60)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_information_state_and_resample() -> None:
    """Resampled worlds share the player's information state; the hidden hands vary."""
    game = load("all_fives", 3, False, target=100)
    rng = np.random.default_rng(5)
    hands_seen = set()
    checked = 0
    while checked < 40:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = [o for o, _ in state.chance_outcomes()]
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))])
                continue
            p = state.current_player()
            if rng.random() < 0.2:
                sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
                new = state.resample_from_infostate(p, sampler)
                assert new.information_state_string(p) == state.information_state_string(p)
                assert new.information_state_tensor(p) == state.information_state_tensor(p)
                assert new.legal_actions() == state.legal_actions()
                hands_seen.add(tuple(new.match.game.hands))
                checked += 1
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
    assert len(hands_seen) > 30
    assert FALLBACKS["fallbacks"] <= FALLBACKS["resamples"] // 10


def test_clone_is_independent() -> None:
    game = load("five_up", 2, False)
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    clone = state.clone()
    clone.apply_action(clone.legal_actions()[0])
    assert str(state) != str(clone)
    assert isinstance(state.match, Match) and state.match.game is not clone.match.game


def test_record_replays_with_the_cli(tmp_path, capsys) -> None:
    from allfives.cli import main
    from allfives_env.records.record import write_records

    game = load("pagat", 4, True, target=80)
    state, _ = play_both(game, 77)
    path = tmp_path / "openspiel.jsonl"
    write_records(path, [state.record(agents=["random"] * 4)])
    assert main(["replay", str(path), "--verify-only"]) == 0
    bad = state.record(agents=["random"] * 4)
    bad["final_scores"][0] += 5
    write_records(path, [bad])
    assert main(["replay", str(path), "--verify-only"]) != 0
