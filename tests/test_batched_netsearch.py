"""The batched ``search:net=...`` (agents/batched/netsearch.py) against the scalar agent.

Where the world is known (2 seats, the unseen tiles are the other hand) sampling plays no part
and the rollouts are deterministic, so every searched move's value and the choice must be
the scalar ``NetSearchAgent``'s, for the defaults (the network in the searching seat's
rollouts, ``heuristic`` from its own view in the others') and with either turned off.
Elsewhere: the values are finite exactly on the legal moves, the same seed gives the same
values, and options without a batched version are refused in one line.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from test_batched_bots import _positions  # noqa: E402
from test_batched_search import _known_positions, assert_known_world_values  # noqa: E402
from test_value_search import constant, with_value  # noqa: E402

from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.batched.bots import make_batched_bot  # noqa: E402
from allfives_env.game.observation import OBS_VIEWS  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402

NET = "search:net=all_fives_2p"


@pytest.mark.parametrize("options", [",sims=24", ",sims=24,rollnet=0",
                                     ",sims=24,oppview=0,depth=1", ",sims=16,depth=0"])
def test_values_and_choice_are_the_scalar_agents_where_the_world_is_known(
        options: str) -> None:
    bot = make_batched_bot(NET + options, seed=1)

    def values_of(games, b: int) -> tuple[int, np.ndarray]:
        best, values = bot.values(games, np.array([b]))
        return int(best[0]), values[0]

    assert_known_world_values(make_agent(NET + options, seed=2), values_of, 4000, 12)


def test_elsewhere_values_cover_the_legal_moves_and_repeat_for_a_seed() -> None:
    checked = 0
    for games, states, live in _positions("all_fives", 2, False, 300, seed=11):
        idx = np.asarray(live[:4], dtype=np.int64)
        a = make_batched_bot(NET + ",sims=16", seed=3).values(games, idx)
        b = make_batched_bot(NET + ",sims=16", seed=3).values(games, idx)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1], equal_nan=True)
        for j, g in enumerate(idx):
            view = SeatView.of(states[g], states[g].current)
            assert a[0][j] in view.legal
            searched = np.flatnonzero(~np.isnan(a[1][j])).tolist()
            assert searched in ([], sorted(view.legal))
            checked += len(searched) > 0
        if checked >= 8:
            break
    assert checked >= 8


def _scores_value() -> list[tuple[np.ndarray, np.ndarray]]:
    """A critic that reads only the scores (the searching seat's and the next seat's), which
    the next hand's deal does not change."""
    w = np.zeros((386, 1))
    w[OBS_VIEWS["scores"].start, 0], w[OBS_VIEWS["scores"].start + 1, 0] = 3.0, -2.0
    return [(w, np.full(1, 0.25))]


def _hand_value() -> list[tuple[np.ndarray, np.ndarray]]:
    """A critic that counts the tiles in the searching seat's hand: a full hand after the next
    hand's deal (whatever the deal), the tiles left where the rollout stopped mid-hand."""
    w = np.zeros((386, 1))
    w[OBS_VIEWS["hand"].start:OBS_VIEWS["hand"].start + 28, 0] = -0.5
    return [(w, np.zeros(1))]


@pytest.mark.parametrize("layers, options", [
    (constant(2.0), ",sims=24,depth=1"),
    (_scores_value(), ",sims=24,depth=1"),
    (_scores_value(), ",sims=24"),
    (_scores_value(), ",sims=16,rollnet=0,oppview=0,depth=1,value=0.5"),
    (_hand_value(), ",sims=24,depth=1"),
])
def test_the_learned_value_at_the_leaves_is_the_scalar_agents_where_the_world_is_known(
        tmp_path, layers, options: str) -> None:
    """``value`` batched: the points since the decision and the game's end, plus ``value`` x
    the critic of the searching seat's own observation at each leaf (after the next hand's
    deal where a hand ended), in points: every value and the choice are the scalar agent's
    where the world is known, for critics that do not depend on which tiles the deal gives."""
    net = f"search:net={with_value(tmp_path, layers)}{options}"
    net += "" if "value=" in options else ",value=1"
    bot = make_batched_bot(net, seed=1)

    def values_of(games, b: int) -> tuple[int, np.ndarray]:
        best, values = bot.values(games, np.array([b]))
        return int(best[0]), values[0]

    assert_known_world_values(make_agent(net, seed=2), values_of, 4000, 12)


@pytest.mark.parametrize("options, words", [
    (",prior=1", "prior has no batched version"),
    (",topk=2,infer=0.5", "topk, infer has no batched version"),
])
def test_options_without_a_batched_version_are_refused(options: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        make_batched_bot(NET + options, seed=0)


def _same_moves_where_the_world_is_known(a: Any, b: Any, n: int) -> None:
    """``a`` and ``b`` choose the same move at the first ``n`` 2-seat positions whose world is
    known and whose move ``b`` does not find obvious."""
    compared = 0
    for _games, _b, view in _known_positions("all_fives", 3000):
        if b.obvious(view) is not None:
            continue
        assert a.act({}, view) == b.act({}, view)
        compared += 1
        if compared >= n:
            break
    assert compared >= n


def test_the_scalar_agent_with_batched_1_plays_the_batched_search_from_its_view() -> None:
    """``search:net=...,batched=1``: the seat's view becomes a one-game batched state
    (allfives_env/batched_engine/view.py) and the batched search decides; where the world is known
    that
    is the scalar search's move."""
    fast = make_agent(NET + ",sims=24,batched=1", seed=1)
    slow = make_agent(NET + ",sims=24", seed=2)
    _same_moves_where_the_world_is_known(fast, slow, 10)
    with pytest.raises(ValueError, match="prior has no batched version"):
        make_agent(NET + ",batched=1,prior=1")


def test_the_batched_bot_does_not_build_the_scalar_agents_lock_step_search(monkeypatch) -> None:
    """The batched ``search`` bot makes the scalar agent only for its checks and options, so
    ``batched=1`` there builds no second search; the scalar agent builds its own at its first
    decision, and still refuses options without a batched version at once."""
    from allfives_agents.batched import netsearch as batched_netsearch

    built = []
    real = batched_netsearch.net_rollouts
    monkeypatch.setattr(batched_netsearch, "net_rollouts",
                        lambda *a: built.append(1) or real(*a))
    make_batched_bot(NET + ",sims=16,batched=1", seed=0)
    assert len(built) == 1  # the batched bot's own
    agent = make_agent(NET + ",sims=16,batched=1", seed=0)
    assert len(built) == 1
    _games, _b, view = next(p for p in _known_positions("all_fives", 3000)
                            if agent.obvious(p[2]) is None)
    agent.act({}, view)
    agent.act({}, view)
    assert len(built) == 2  # once, at its first decision


def test_net_best_plays_the_shipped_model_for_the_rules_in_play() -> None:
    """``search:net=best``: the shipped model for the game's rules, found at its first move
    (the level ``strongest``): the same moves as naming that model, another model at another
    table, no batched bot (the rules are not known when it is built), and a table no shipped
    model plays refused in one line at the first move."""
    best = make_agent("search:net=best,sims=24,batched=1", seed=1)
    named = make_agent(NET + ",sims=24,batched=1", seed=1)
    assert best.net.directory is None  # nothing loaded before the rules are known
    _same_moves_where_the_world_is_known(best, named, 4)
    assert best.net.directory is not None
    assert best.net.directory.name == "all_fives_2p"
    with pytest.raises(ValueError, match="search:net=best has no batched version"):
        make_batched_bot("search:net=best,sims=16", seed=0)
    from allfives_env.game.match import play_game
    from allfives_env.game.rules import make_rules

    three = make_agent("search:net=best,sims=8", seed=2)
    state = play_game(make_rules("all_fives", players=3, target=30),
                      [three, make_agent("greedy"), make_agent("greedy")], seed=4)
    assert state.game_over and three.net.directory.name == "all_fives_3p"
    nobody = make_agent("search:net=best,sims=8", seed=3)
    with pytest.raises(ValueError, match="no shipped model plays 4 seats") as err:
        play_game(make_rules("all_fives", players=4, teams=False), [nobody] * 4, seed=1)
    assert "\n" not in str(err.value)


def test_warm_up_searches_once_with_the_batched_search() -> None:
    """``allfives serve`` compiles the level strongest's search in a thread at start
    (agents/web/server.py): the warm-up plays until the batched search has decided once."""
    from allfives_agents.planning.netsearch import warm_up

    agent: Any = warm_up()
    assert agent._lockstep is not None and agent.net.directory.name == "all_fives_2p"
