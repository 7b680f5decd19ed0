"""``oracle``, the ceiling of the strength table: search that sees every hand. It must see them
(its worlds are the real game), be buildable only by ``allfives eval``, leave the game it watches
exactly as it was, and be stronger than ``search``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from allfives.cli import main
from allfives_agents.base import make_agent
from allfives_agents.evaluation.evaluate import build_agent, tournament
from allfives_agents.rulebased.oracle import Binder, OracleSearch, TrueWorlds, make_oracle
from allfives_env.game.engine import GameState
from allfives_env.game.match import play_game
from allfives_env.game.rules import make_rules
from allfives_env.game.view import SeatView
from allfives_env.records.record import read_records, verify

SMALL = "oracle:sims=16,min_worlds=4"


def _midgame(seed: int, moves: int = 6, players: int = 2) -> GameState:
    g = GameState(make_rules("all_fives", players=players), seed, log=False)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        legal = g.legal_actions()
        g.apply(legal[int(rng.integers(len(legal)))])
        if g.hand_over:
            break
    return g


@pytest.mark.parametrize("players", [2, 3, 4])
def test_its_worlds_are_the_real_hands_with_the_boneyard_reshuffled(players: int) -> None:
    g = _midgame(3, players=players)
    before = (list(g.hands), list(g.boneyard), g.bone_pos, list(g.history))
    worlds = TrueWorlds(g, np.random.default_rng(0))
    orders = set()
    for _ in range(10):
        w = worlds.sample()
        assert w.hands == g.hands and w.bone_pos == g.bone_pos and w.bone_end == g.bone_end
        assert w.boneyard[:g.bone_pos] == g.boneyard[:g.bone_pos]
        assert sorted(w.boneyard[g.bone_pos:]) == sorted(g.boneyard[g.bone_pos:])
        orders.add(tuple(w.boneyard[g.bone_pos:]))
        assert w.history is not g.history and w.rng is not g.rng and w.dealer is None
    assert len(orders) > 1  # the order of the boneyard is not known to it
    assert (list(g.hands), list(g.boneyard), g.bone_pos, list(g.history)) == before


def test_it_can_be_built_only_by_eval() -> None:
    with pytest.raises(ValueError, match="unknown agent 'oracle'"):
        make_agent("oracle")  # so play, the browser, training and levels cannot
    assert isinstance(build_agent(SMALL, 0), OracleSearch)
    with pytest.raises(ValueError, match="sims=0"):
        make_oracle("oracle:sims=0")
    with pytest.raises(ValueError, match="bogus"):
        make_oracle("oracle:bogus=1")


def test_it_refuses_a_game_it_was_not_shown() -> None:
    g = _midgame(5)
    oracle = make_oracle(SMALL, 0)
    view = SeatView.of(g, g.current)
    with pytest.raises(RuntimeError, match="only inside allfives eval"):
        oracle.act({}, view)
    other = _midgame(6)
    oracle.bind(other)
    with pytest.raises(RuntimeError, match="only inside allfives eval"):
        oracle.act({}, view)
    oracle.bind(g)
    assert oracle.act({}, view) in view.legal


def test_it_reads_the_hidden_hands() -> None:
    """Unlike every bot (tests/test_no_peeking.py), its move depends on what its seat cannot
    see: over many positions, changing another hand changes some of its moves."""
    from test_no_peeking import _hidden_twin, _states

    rng, differ, compared = np.random.default_rng(1), 0, 0
    for g in _states(80):
        twin = _hidden_twin(g, g.current, rng)
        if twin is None or len(g.legal_actions()) < 2:
            continue
        moves = []
        for state in (g, twin):
            oracle = make_oracle("oracle:sims=64", 0)
            oracle.bind(state)
            moves.append(oracle.act({}, SeatView.of(state, state.current)))
        differ += moves[0] != moves[1]
        compared += 1
    assert compared >= 20 and differ >= 2


def test_games_with_it_replay_exactly(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    assert main(["eval", "--agents", SMALL, "greedy", "--games", "4", "--seed", "3",
                 "--workers", "1", "--records", str(out), "--no-progress"]) == 0
    records = list(read_records(out))
    assert len(records) == 4
    for record in records:
        verify(record)


def test_the_binder_shows_the_game_to_oracles_only() -> None:
    rules = make_rules("all_fives")
    oracle, greedy = make_oracle(SMALL, 0), make_agent("greedy", 1)
    binder = Binder([oracle, greedy])
    assert binder.oracles == [oracle]
    state = play_game(rules, [oracle, greedy], seed=11, watcher=binder)
    assert oracle.state is state and state.game_over
    assert not hasattr(greedy, "state")


def test_it_beats_search_on_the_same_deals() -> None:
    """The ceiling is above ``search``: at equal sims, seeing the hands wins most games."""
    rules = make_rules("all_fives")
    outcomes = list(tournament(rules, ["oracle:sims=32", "search:sims=32"], 24, seed=4))
    wins = sum(o.winner == 0 for o in outcomes)
    assert len(outcomes) == 24 and wins >= 15, wins


def test_eval_help_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    assert "oracle" in capsys.readouterr().out


def test_eval_json_names_it(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert main(["eval", "--agents", "greedy", SMALL, "--games", "2", "--seed", "1",
                 "--workers", "1", "--json", str(out), "--no-progress"]) == 0
    assert SMALL in [a["id"] for a in json.loads(out.read_text())["agents"]]
