"""OpenSpiel's bots on ``allfives``: ISMCTS and MCTS play whole games; the ``openspiel:``
agent ids play through ``allfives eval``, never peek, and explain a missing open_spiel."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

import allfives_env.spiel.openspiel  # noqa: E402, F401  (registers the game)
from allfives.cli import main  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.evaluation.evaluate import play_game  # noqa: E402
from allfives_env.game.observation import observe  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402


@pytest.mark.parametrize("spec", ["allfives(preset=five_up,target=40)",
                                  "allfives(players=4,preset=muggins,target=40)",
                                  "allfives(players=3,preset=all_fives,target=40)"])
def test_openspiel_ismcts_and_mcts_play_whole_games(spec: str) -> None:
    """OpenSpiel's Python ISMCTS (resampling through the game's resample_from_infostate)
    against its MCTS bot with random rollouts, whole games, no error."""
    game = pyspiel.load_game(spec)
    rs = np.random.RandomState(3)
    ev = mcts.RandomRolloutEvaluator(1, rs)
    bots = [ismcts.ISMCTSBot(game, ev, 2.0, 8, random_state=rs) if p % 2 == 0
            else mcts.MCTSBot(game, 2.0, 8, ev, solve=False, random_state=rs)
            for p in range(game.num_players())]
    state = game.new_initial_state()
    while not state.is_terminal():  # (evaluate_bots needs restart_at, which ISMCTS lacks)
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rs.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(bots[state.current_player()].step(state)))
    returns = state.returns()
    assert abs(sum(returns)) < 1e-9 and max(abs(r) for r in returns) <= 1.0


@pytest.mark.parametrize("agent_id", ["openspiel:ismcts,sims=12", "openspiel:mcts,sims=12,worlds=3",
                                      "openspiel:ismcts,sims=6,eval=random"])
def test_agent_ids_play_games(agent_id: str) -> None:
    for players, teams in ((2, False), (4, True)):
        rules = make_rules("five_up", players=players, teams=teams, target=60)
        agents = [make_agent(agent_id if s % 2 == 0 else "greedy", seed=s)
                  for s in range(players)]
        state = play_game(rules, agents, seed=11)
        assert state.game_over


def test_eval_cli_runs_ismcts(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--agents", "openspiel:ismcts,sims=8", "greedy", "--games", "2",
                 "--set", "target=40", "--workers", "1", "--no-progress"])
    assert code == 0
    assert "openspiel:ismcts,sims=8" in capsys.readouterr().out


def test_agent_never_peeks() -> None:
    """States that differ only in hidden tiles give the same action (same seed)."""
    from test_no_peeking import _hidden_twin, _states

    rng = np.random.default_rng(1)
    compared = 0
    for g in _states(40):
        seat = g.current
        twin = _hidden_twin(g, seat, rng)
        if twin is None or len(g.legal_actions()) < 2:
            continue
        view, twin_view = SeatView.of(g, seat), SeatView.of(twin, seat)
        assert view == twin_view and twin.hands != g.hands
        obs = {"observation": observe(g, seat)}
        a = make_agent("openspiel:ismcts,sims=10", seed=compared).act(obs, view)
        b = make_agent("openspiel:ismcts,sims=10", seed=compared).act(obs, twin_view)
        assert a == b
        compared += 1
    assert compared >= 10


def test_bad_options_and_missing_open_spiel(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("openspiel:cfr", "openspiel:ismcts,depth=3", "openspiel:mcts,sims=0",
                "openspiel:ismcts,sims=many"):
        with pytest.raises(ValueError, match="openspiel"):
            make_agent(bad)
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel now fails
    with pytest.raises(ValueError, match=r"pip install 'allfives\[openspiel\]'"):
        make_agent("openspiel:ismcts")
    assert main(["eval", "--agents", "openspiel:ismcts", "greedy", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install" in err


@pytest.mark.parametrize("agent_id", ["openspiel:ismcts,sims=100000",
                                      "openspiel:mcts,sims=100000,worlds=1000"])
def test_heaviest_ids_stop_at_a_moves_deadline(agent_id: str) -> None:
    """Under a move's deadline (what ``serve`` and ``play`` give every bot move) the heaviest
    allowed OpenSpiel ids stop and play a legal move from what they have searched: the
    thread's CPU time is at most the deadline plus 1 s (without it, minutes)."""
    import time

    from allfives_agents.planning.deadline import move_deadline
    from allfives_env.game.engine import GameState

    g = GameState(make_rules("all_fives", players=2), 5, log=False)
    while len(g.legal_actions()) < 2:  # a position with a choice
        g.apply(g.legal_actions()[0])
    seat = g.current
    view = SeatView.of(g, seat)
    agent = make_agent(agent_id, seed=0)
    start = time.thread_time()
    with move_deadline(1.0):
        action = agent.act({"observation": observe(g, seat)}, view)
    assert action in view.legal
    assert time.thread_time() - start <= 2.0
