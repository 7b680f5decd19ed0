"""``search:net=<checkpoint>``: the id parses, plain ``search`` is unchanged, the network
variant plays legal, reproducible games, and bad ids are refused in one line."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from allfives_agents.base import make_agent, parse_agent_id
from allfives_agents.planning.netsearch import NetSearchAgent
from allfives_agents.planning.search import SearchAgent
from allfives_env.game.match import play_game, seat_input
from allfives_env.game.rules import make_rules

ROOT = Path(__file__).resolve().parent.parent
NET = "checkpoints/all_fives_2p"
FAST = f"search:net={NET},sims=16,min_worlds=2"


def events_digest(agent_id: str, seed: int) -> tuple[list[int], str]:
    state = play_game(make_rules("all_fives"), [make_agent(agent_id), make_agent("heuristic")],
                      seed)
    events = json.dumps([h["events"] for h in state.history])
    return list(state.scores), hashlib.sha256(events.encode()).hexdigest()[:16]


def test_the_id_parses_into_a_net_search_agent() -> None:
    assert parse_agent_id(f"search:net={NET},sims=256,prior=1.5,topk=3") == (
        "search", {"net": NET, "sims": 256, "prior": 1.5, "topk": 3})
    agent = make_agent(f"search:net={NET},sims=100,prior=1.5,topk=3,depth=2")
    assert isinstance(agent, NetSearchAgent) and agent.needs_obs
    assert (agent.sims, agent.prior, agent.topk, agent.depth) == (100, 1.5, 3, 2)
    default = make_agent(f"search:net={NET}")
    assert (default.sims, default.depth, default.rollnet, default.prior) == (256, 2, True, 0)
    plain = make_agent("search")
    assert type(plain) is SearchAgent and not plain.needs_obs


@pytest.mark.parametrize(("agent_id", "seed", "scores", "digest"), [
    ("search", 3, [260, 105], "47f414f510466ce9"),
    ("search:sims=32,depth=2", 4, [260, 135], "80ee8a7ba7de10a9"),
])
def test_plain_search_plays_the_same_moves_as_before(agent_id: str, seed: int,
                                                     scores: list[int], digest: str) -> None:
    """Digests of whole games recorded with ``search`` before the network variant existed."""
    assert events_digest(agent_id, seed) == (scores, digest)


@pytest.mark.slow
@pytest.mark.parametrize("options", ["", ",prior=3,topk=3", ",infer=0.4", ",rollnet=0",
                                     ",eps=0.2,defend=0"])
def test_net_search_is_legal_and_deterministic_for_a_seed(options: str) -> None:
    rules = make_rules("all_fives")
    runs = []
    for _ in range(2):
        state = play_game(rules, [make_agent(FAST + options), make_agent("search")], seed=11)
        assert state.game_over  # every move passed the match runner's legality check
        runs.append(json.dumps([h["events"] for h in state.history]))
    assert runs[0] == runs[1]


def test_the_prior_and_topk_change_the_choice_as_documented() -> None:
    """``topk=1`` plays the network's own move; a huge prior does too."""
    rules = make_rules("all_fives")
    net = make_agent(f"ckpt:{NET}")
    top1 = make_agent(f"search:net={NET},topk=1")
    strong = make_agent(f"search:net={NET},sims=8,min_worlds=1,prior=1000000")
    state = _decision_point(rules, seed=5)
    obs, view = seat_input(state, state.current)
    assert len(view.legal) > 1
    want = net.act(obs, view)
    assert top1.act(obs, view) == want == strong.act(obs, view)
    logp = top1.log_policy(obs, view)
    assert logp.shape == (len(view.legal),) and np.isclose(np.exp(logp).sum(), 1.0)


def _decision_point(rules, seed: int):  # type: ignore[no-untyped-def]
    """A state of game ``seed`` (greedy play) where the seat to move has several choices."""
    from allfives_env.game.match import new_game

    state = new_game(rules, seed)
    greedy = make_agent("greedy")
    while True:
        obs, view = seat_input(state, state.current)
        if len(view.legal) > 2:
            return state
        state.apply(greedy.act(obs, view))


@pytest.mark.parametrize(("agent_id", "message"), [
    ("search:net=no/such/checkpoint", "checkpoint 'no/such/checkpoint' not found"),
    ("search:net=checkpoints/all_fives_4p_teams", "trained for 4 seats"),
    ("search:net=configs", "not found"),
    ("search:net=5", "must name a checkpoint"),
    (f"search:net={NET},prior=-1", "prior=-1 must be a number >= 0"),
    (f"search:net={NET},topk=x", "topk='x' must be a number >= 0"),
    (f"search:net={NET},oppview=-1", "oppview=-1 must be a number >= 0"),
    (f"search:net={NET},bogus=1", "unknown option(s) 'bogus'"),
])
def test_bad_ids_exit_2_with_one_line(agent_id: str, message: str) -> None:
    assert_refused(agent_id, message)


def test_a_checkpoint_without_a_network_is_refused(tmp_path: Path) -> None:
    """A model card with no readable policy file is not a network."""
    card = (ROOT / NET / "card.json").read_text()
    (tmp_path / "card.json").write_text(card)
    assert_refused(f"search:net={tmp_path}", "not a readable policy file")


def assert_refused(agent_id: str, message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "allfives.cli", "eval", "--agents", agent_id, "greedy",
         "--games", "2", "--workers", "1", "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], proc.stderr


def test_without_prior_filter_or_inference_it_is_plain_search() -> None:
    """rollnet, prior, topk, infer and oppview off: the moves are ``search``'s at the same
    options."""
    off = f"search:net={NET},sims=32,depth=1,rollnet=0,prior=0,topk=0,infer=0,oppview=0"
    assert events_digest(off, 4)[1] == events_digest("search:sims=32", 4)[1]
    assert events_digest(f"search:net={NET},sims=32,depth=1,rollnet=0,oppview=0,prior=3",
                         4)[1] != \
        events_digest("search:sims=32", 4)[1]


@pytest.mark.parametrize(("depth", "own_moves"), [(0, None), (1, 1), (2, 2)])
def test_net_rollouts_stop_where_search_rollouts_stop(depth: int, own_moves: int | None
                                                      ) -> None:
    """``depth=0``: to the end of the hand; else until the seat would move ``depth + 1``
    times (it moves ``depth`` times inside the rollout)."""
    state = _decision_point(make_rules("all_fives"), seed=7)
    seat = state.current
    agent = make_agent(f"search:net={NET},rollnet=1,depth={depth}")
    assert isinstance(agent, NetSearchAgent)
    world = state.copy()
    world.apply(world.legal_actions()[0])  # the candidate
    before = world.played_by.count(seat)
    agent.net_rollout(world, seat, {})
    if own_moves is None:
        assert world.hand_over
    else:
        assert world.hand_over or (world.played_by.count(seat) - before == own_moves
                                   and world.current == seat)


@pytest.mark.parametrize("rollnet", [0, 1])
def test_oppview_rollouts_give_the_other_seat_heuristic_moves_from_its_own_view(
        rollnet: int) -> None:
    """``oppview=1``: in the rollouts every other seat plays ``heuristic``'s move from its
    own view of the sampled world (it never sees the searching seat's hand), the searching
    seat plays the network (``rollnet=1``) or ``search``'s fast policy (``rollnet=0``)."""
    from allfives_agents.planning.search import rollout
    from allfives_agents.rulebased.heuristic import HeuristicAgent
    from allfives_env.game.match import NO_OBS
    from allfives_env.game.view import SeatView

    rules = make_rules("all_fives")
    heuristic = HeuristicAgent()
    for seed in (7, 8, 9):
        state = _decision_point(rules, seed=seed)
        seat = state.current
        agent = make_agent(f"search:net={NET},rollnet={rollnet},oppview=1,depth=0")
        assert isinstance(agent, NetSearchAgent) and agent.oppview
        world = state.copy()
        world.apply(world.legal_actions()[0])
        want = world.copy()
        agent.net_rollout(world, seat, {})
        own = (lambda st, legal, a=agent, s=seat: a._own_move(st, s, legal, {})) \
            if rollnet else None
        rollout(want, random.Random(0), 0.0, seat, 0, agent.defend, own=own,
                others=lambda st, legal: heuristic.act(NO_OBS, SeatView.of(st, st.current)))
        assert world.hand_over and world.played_by == want.played_by
        assert world.scores == want.scores and world.hands == want.hands
    assert make_agent(f"search:net={NET}").oppview is True  # on by default


def test_hidden_tiles_do_not_change_the_action() -> None:
    """As tests/test_no_peeking.py for the other bots: states that differ only in what the
    seat cannot see give the same action (rollnet and infer on)."""
    from test_no_peeking import _hidden_twin, _states

    rng = np.random.default_rng(3)
    compared = 0
    for g in _states(80):
        if g.n != 2:
            continue
        seat = g.current
        twin = _hidden_twin(g, seat, rng)
        if twin is None:
            continue
        assert twin.hands != g.hands
        actions = []
        for state in (g, twin):
            agent = make_agent(f"{FAST},prior=1,infer=0.4", seed=5)
            actions.append(agent.act(*seat_input(state, seat)))
        assert actions[0] == actions[1]
        compared += 1
    assert compared >= 10
