"""A checkpoint's learned value (its critic in ``policy.npz``) and ``search:net=...,value=W``,
which uses it at the leaves of the search instead of ``leaf``/``dleaf``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from test_netsearch import _decision_point, assert_refused

from allfives_agents.base import make_agent
from allfives_agents.trained.checkpoint import load_checkpoint
from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.match import seat_input
from allfives_env.game.rules import make_rules

ROOT = Path(__file__).resolve().parent.parent
NET = ROOT / "checkpoints/all_fives_2p"  # carries its critic since 2026-12-05
PLAIN = ROOT / "tests/fixtures/checkpoints/dmc4_all_fives_2p"  # a 2-seat network without one


def with_value(tmp_path: Path, layers: list[tuple[np.ndarray, np.ndarray]]) -> Path:
    """A copy of the shipped 2-seat checkpoint carrying the critic ``layers``."""
    folder = tmp_path / "net"
    shutil.copytree(NET, folder)
    policy = NumpyPolicy.load(folder / "policy.npz").with_value(layers)
    policy.save(folder / "policy.npz")
    return folder


def constant(c: float) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(np.zeros((386, 4)), np.zeros(4)), (np.zeros((4, 1)), np.full(1, c))]


def test_the_value_round_trips_through_policy_npz(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(386, 8)), rng.normal(size=8)),
              (rng.normal(size=(8, 1)), rng.normal(size=1))]
    _, _, policy = load_checkpoint(str(with_value(tmp_path, layers)))
    x = rng.random((3, 386)).astype(np.float32)
    want = np.maximum(x @ layers[0][0] + layers[0][1], 0) @ layers[1][0] + layers[1][1]
    assert policy.has_value and np.allclose(policy.value(x), want[:, 0], rtol=1e-4)
    # the actor's input (observation + per-action features) is read up to the observation
    wide = np.concatenate([x, rng.random((3, 140 * 17)).astype(np.float32)], axis=1)
    assert np.allclose(policy.value(wide), policy.value(x))
    assert not NumpyPolicy.load(PLAIN / "policy.npz").has_value
    assert NumpyPolicy.load(NET / "policy.npz").has_value


def test_the_fast_path_exports_its_critic() -> None:
    torch = pytest.importorskip("torch")
    from allfives_train.algorithms.ppo_batched.net import ActorCritic

    net = ActorCritic(386, 140, [16, 16], "relu")
    x = np.random.default_rng(1).random((4, 386)).astype(np.float32)
    policy = NumpyPolicy.from_arrays(net.numpy_policy().arrays())
    with torch.no_grad():
        assert np.allclose(policy.value(x), net.value(torch.as_tensor(x)).numpy(), atol=1e-5)


def test_a_constant_value_chooses_as_points_and_games_do(tmp_path: Path) -> None:
    """With the same value everywhere only the points so far and the game's end count: the
    moves of plain search without leaf charges and a game worth ``target`` points (2 seats:
    margin_reward 1 per 250 points, win_reward 1)."""
    folder = with_value(tmp_path, constant(3.0))
    card = json.loads((folder / "card.json").read_text())
    assert card["config"]["margin_reward"] == card["config"]["win_reward"] == 1.0
    rules = make_rules("all_fives")
    base = "sims=24,min_worlds=3,depth=1,rollnet=0,oppview=0"
    valued = make_agent(f"search:net={folder},{base},value=1", seed=7)
    plain = make_agent(f"search:net={folder},{base},leaf=0,dleaf=0,win=250", seed=7)
    for seed in range(6):
        state = _decision_point(rules, seed)
        obs, view = seat_input(state, state.current)
        assert valued.act(obs, view) == plain.act(obs, view)


def test_the_value_decides_where_points_tie(tmp_path: Path) -> None:
    """A value that grows with the tiles in the searching seat's hand makes the search keep
    tiles; its negative makes it shed them: the choice follows the network's value."""
    rules = make_rules("all_fives")
    chosen = []
    for sign in (1.0, -1.0):
        w = np.zeros((386, 1))
        w[:28, 0] = sign * 100.0  # the observation's first 28 floats: the seat's own hand
        folder = with_value(tmp_path / str(sign), [(w, np.zeros(1))])
        agent = make_agent(f"search:net={folder},sims=16,min_worlds=2,depth=1,value=1", seed=3)
        picks = []
        for seed in range(8):
            state = _decision_point(rules, seed)
            picks.append(agent.act(*seat_input(state, state.current)))
        chosen.append(picks)
    assert chosen[0] != chosen[1]


def test_hidden_tiles_do_not_change_the_action(tmp_path: Path) -> None:
    """The value reads the seat's own view of each sampled world, never the real hands."""
    from test_no_peeking import _hidden_twin, _states

    rng = np.random.default_rng(4)
    weights = [(rng.normal(size=(386, 8)), np.zeros(8)), (rng.normal(size=(8, 1)), np.zeros(1))]
    folder = with_value(tmp_path, weights)
    compared = 0
    for g in _states(60):
        if g.n != 2 or (twin := _hidden_twin(g, g.current, rng)) is None:
            continue
        actions = [make_agent(f"search:net={folder},sims=16,min_worlds=2,depth=1,value=1",
                              seed=5).act(*seat_input(s, g.current)) for s in (g, twin)]
        assert actions[0] == actions[1]
        compared += 1
    assert compared >= 8


def test_value_needs_a_checkpoint_that_has_one(tmp_path: Path) -> None:
    assert_refused(f"search:net={PLAIN},value=1", "carries its value network")
    assert_refused(f"search:net={NET},value=-1", "value=-1 must be a number >= 0")


def test_checkpoints_carry_a_value_only_where_the_algo_trains_one() -> None:
    pytest.importorskip("torch")
    from allfives_train import algos
    from allfives_train.algorithms.ppo_batched.net import actor_from, make_agent_net

    assert {a.name for a in algos.ALGOS.values() if a.trains_value} == {"ppo_batched", "dmc"}
    # search_distill's only where its teacher searches with a learned value (test_distill.py)
    assert {a.name for a in algos.ALGOS.values() if a.value_if} == {"search_distill"}
    net = make_agent_net("action_features", 386, 140, [16, 16], "relu", n_features=17)
    policy = net.numpy_policy()
    again = actor_from(policy).numpy_policy()  # the value comes back as the critic
    x = np.random.default_rng(2).random((3, 386)).astype(np.float32)
    assert np.allclose(again.value(x), policy.value(x))


def test_a_value_that_does_not_fit_is_refused_in_one_line(tmp_path: Path) -> None:
    """A policy.npz whose value layers do not chain, read another input, or hold NaN."""
    misfit = "policy value layers do not fit the observation"
    bad = {"shape": ([(np.zeros((100, 4)), np.zeros(4)), (np.zeros((4, 1)), np.zeros(1))],
                     misfit),
           "outputs": ([(np.zeros((386, 2)), np.zeros(2))], misfit),
           "nan": ([(np.full((386, 1), np.nan), np.zeros(1))], "holds NaN or infinite weights")}
    for name, (layers, message) in bad.items():
        folder = tmp_path / name
        shutil.copytree(PLAIN, folder)
        arrays = NumpyPolicy.load(folder / "policy.npz").arrays()
        for i, (w, b) in enumerate(layers[:-1]):
            arrays[f"vw{i}"], arrays[f"vb{i}"] = w, b
        arrays["vwout"], arrays["vbout"] = layers[-1]
        np.savez(folder / "policy.npz", **arrays)
        assert_refused(f"ckpt:{folder}", message)
