"""Differential test: the batched engine against the scalar ``GameState``.

Both play the same deals (drawn here, leaders included) and the same random legal actions;
every decision compares the legal moves, the seat to act, the observation of that seat and of
the next seat (``np.array_equal`` on float32), the points, the scores; every hand end compares
the events, the result, the leader and the deal; every game end the winner and truncation.

CI runs ``DECISIONS`` decisions per configuration; the long run (at least 100k per preset and
seat count) is ``ALLFIVES_DIFF_DECISIONS=100000 pytest tests/test_batched_diff.py -m slow``.

The rule variants are generated from the rule declaration (``tests/rule_cases.py``): every
option with every declared value, alone, with 2, 3 and 4 seats, plus seeded random mixes; each
case plays ``CASE_GAMES`` whole games. A value declared in ``rules.py`` that an engine does not
implement fails here (the batched engine refuses it by name).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("numba")

from rule_cases import Case, case_id, mixed_cases, single_cases  # noqa: E402

from allfives_env.batched_engine.games import BatchedGames  # noqa: E402
from allfives_env.game.engine import Deal, GameState, random_deal  # noqa: E402
from allfives_env.game.observation import observe  # noqa: E402
from allfives_env.game.rules import PRESETS, Rules, make_rules  # noqa: E402

DECISIONS = 20_000
SLOW_DECISIONS = int(os.environ.get("ALLFIVES_DIFF_DECISIONS", "100000"))
SEATS = [(2, False), (3, False), (4, False), (4, True)]
CASE_GAMES = 2
# hand-picked mixes (kept from before the cases were generated)
VARIANTS: list[Case] = [
    ("all_fives", {"win_check": "end_of_hand", "players": 3}),
    ("five_up", {"spinner": False, "players": 2}),
    ("pagat", {"boneyard_reserve": 2, "players": 3}),
    ("muggins", {"max_hands": 2, "players": 2}),
    ("all_fives", {"next_leader": "random", "players": 4, "teams": False, "target": 60}),
    ("five_up", {"rounding": "total", "players": 4, "hand_size": 7}),
]


class Deals:
    """Deals drawn once per (slot, game, hand) and shared by both engines."""

    def __init__(self, rules: Rules, rng: np.random.Generator) -> None:
        self.rules, self.rng, self.table = rules, rng, {}
        self.game: dict[int, int] = {}

    def get(self, slot: int, hand: int) -> Deal:
        key = (slot, self.game.get(slot, 0), hand)
        if key not in self.table:
            deal = random_deal(self.rules, self.rng)
            deal.leader = int(self.rng.integers(self.rules.players))
            self.table[key] = deal
        return self.table[key]


def _compare_hand(got: dict, want: dict, where: str) -> None:
    assert got["leader"] == want["leader"], where
    assert got["deal"].hands == [list(h) for h in want["deal"].hands], where
    assert got["deal"].boneyard == list(want["deal"].boneyard), where
    assert got["events"] == [tuple(e) for e in want["events"]], where
    assert got["result"] == want["result"], where
    assert got["scores"] == list(want["scores"]), where


def run_diff(rules: Rules, decisions: int, seed: int = 0, batch: int = 24) -> int:
    """Play chunks of ``batch`` games in both engines until ``decisions`` were compared."""
    rng = np.random.default_rng(seed)
    deals = Deals(rules, rng)
    done = chunk = 0
    while done < decisions:
        deals.game = dict.fromkeys(range(batch), chunk)
        games = BatchedGames(rules, batch, seed=seed, autoreset=False, log=True,
                             dealer=deals.get)
        games.reset()
        states = [GameState(rules, seed=seed, dealer=lambda k, _r, b=b: deals.get(b, k))
                  for b in range(batch)]
        done += _play_chunk(rules, games, states, rng, f"chunk {chunk}")
        chunk += 1
    return done


def _play_chunk(rules: Rules, games: BatchedGames, states: list[GameState],
                rng: np.random.Generator, where: str) -> int:
    n, decisions = rules.players, 0
    while not all(s.game_over for s in states):
        mask = games.legal_mask().copy()
        obs = games.observe().copy()
        nxt = games.observe_seat((games.current + 1) % n).copy()
        actions = np.full(len(states), -1, dtype=np.int64)
        for b, st in enumerate(states):
            at = f"{where} game {b} hand {st.hand_index}"
            assert games.in_play[b] == (not st.game_over), at
            if st.game_over:
                assert not mask[b].any(), at
                continue
            legal = st.legal_actions()
            assert games.current[b] == st.current, at
            assert np.flatnonzero(mask[b]).tolist() == legal, at
            assert np.array_equal(obs[b], observe(st, st.current)), at
            assert np.array_equal(nxt[b], observe(st, (st.current + 1) % n)), at
            actions[b] = legal[int(rng.integers(len(legal)))]
        result = games.step(actions)
        for b, st in enumerate(states):
            if actions[b] < 0:
                assert not result.acted[b]
                continue
            at = f"{where} game {b} hand {st.hand_index}"
            before = list(st.scores)
            assert result.points[b] == st.apply(int(actions[b])), at
            decisions += 1
            assert result.hand_over[b] == st.hand_over, at
            deltas = [a - c for a, c in zip(st.scores, before)]
            assert result.deltas[b].tolist() == deltas, at
            if st.hand_over:
                _compare_hand(games.finished_hand(b), st.history[-1], at)
                if not st.game_over:
                    st.next_hand()
            assert result.game_over[b] == st.game_over, at
            if st.game_over:
                assert result.winners[b] == (-1 if st.winner is None else st.winner), at
                assert result.truncated[b] == st.truncated, at
                assert result.final_scores[b].tolist() == st.scores, at
            assert games.scores[b].tolist() == st.scores, at
            assert games.hand_index[b] == st.hand_index, at
    return decisions


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("players,teams", SEATS)
def test_same_game_as_scalar(preset: str, players: int, teams: bool) -> None:
    rules = make_rules(preset, players=players, teams=teams)
    assert run_diff(rules, DECISIONS // 4 if os.environ.get("CI_QUICK") else DECISIONS) > 0


@pytest.mark.parametrize("players,teams", SEATS)
def test_same_game_as_scalar_quick(players: int, teams: bool) -> None:
    """The fast set's differential test: every seating, all_fives, a few thousand decisions
    (the marked-slow test above runs every preset at full length)."""
    assert run_diff(make_rules("all_fives", players=players, teams=teams), 2_000, seed=5) > 0


@pytest.mark.parametrize("case", single_cases() + mixed_cases(9, seed=51) + VARIANTS,
                         ids=case_id)
def test_rule_variants(case: Case) -> None:
    """Every declared value of every rule option, alone on a preset with 2, 3 and 4 seats,
    and mixes: ``CASE_GAMES`` whole games each."""
    preset, overrides = case
    assert run_diff(make_rules(preset, **overrides), 1, seed=3, batch=CASE_GAMES) > 0


@pytest.mark.slow
@pytest.mark.parametrize("case", single_cases(full=True) + mixed_cases(60, seed=52),
                         ids=case_id)
def test_rule_variants_sweep(case: Case) -> None:
    """The extended sweep: every declared value on every preset where legal, more mixes."""
    preset, overrides = case
    assert run_diff(make_rules(preset, **overrides), 1, seed=7, batch=8) > 0


@pytest.mark.slow
@pytest.mark.skipif("ALLFIVES_DIFF_DECISIONS" not in os.environ,
                    reason="set ALLFIVES_DIFF_DECISIONS=100000 for the long differential run")
@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("players,teams", SEATS)
def test_same_game_long(preset: str, players: int, teams: bool) -> None:
    rules = make_rules(preset, players=players, teams=teams)
    done = run_diff(rules, SLOW_DECISIONS, seed=11, batch=64)
    print(f"{preset} players={players} teams={teams}: {done} decisions identical")
    assert done >= SLOW_DECISIONS
