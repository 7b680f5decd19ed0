"""Issue 62, item 5: the conventions other people's code expects.

``ckpt:best`` (and ``search:net=best``) as ``make_vec`` opponents; ``info["action_mask"]`` in
every vectorization mode; the parallel route registered with PettingZoo and passing its
parallel checks for 2, 3 and 4 seats; ``render()`` without a mode warns and returns None; one
warning per env for an illegal action in a game's first moves."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import allfives_env
from allfives_env.env import EARLY_ILLEGAL, env
from allfives_env.game.tiles import N_ACTIONS


def _first_legal(mask: np.ndarray) -> np.ndarray:
    return np.array([int(np.flatnonzero(m)[0]) if m.any() else 0 for m in mask])


# ---------------------------------------------------------------- ckpt:best in make_vec
def _trajectory(opponent: str, steps: int = 40) -> list[np.ndarray]:
    gymnasium = pytest.importorskip("gymnasium")
    pytest.importorskip("numba")
    v = gymnasium.make_vec("allfives/AllFives-v0", num_envs=8, opponents=[opponent], seed=5)
    obs, info = v.reset(seed=5)
    out = [obs]
    for _ in range(steps):
        obs, reward, _, _, info = v.step(_first_legal(info["action_mask"]))
        out += [obs, reward]
    return out


def test_ckpt_best_is_a_make_vec_opponent_playing_the_shipped_model() -> None:
    """The same games as naming the shipped model for the table (all_fives_2p at 2 seats),
    and not those of another opponent."""
    best, named = _trajectory("ckpt:best"), _trajectory("ckpt:all_fives_2p")
    assert all(np.array_equal(a, b) for a, b in zip(best, named, strict=True))
    greedy = _trajectory("greedy")
    assert not all(np.array_equal(a, b) for a, b in zip(best, greedy, strict=True))


def test_ckpt_best_where_no_model_plays_is_one_line() -> None:
    gymnasium = pytest.importorskip("gymnasium")
    pytest.importorskip("numba")
    with pytest.raises(ValueError) as err:
        gymnasium.make_vec("allfives/AllFives-v0", num_envs=2, opponents=["ckpt:best"],
                           players=4, teams=False)  # no shipped model plays it
    message = str(err.value)
    assert message.startswith("no shipped model plays 4 seats") and "\n" not in message


# ---------------------------------------------------------------- info["action_mask"]
@pytest.mark.parametrize("mode", ["sync", "async", None])
def test_info_action_mask_in_every_vectorization_mode(mode: str | None) -> None:
    """After reset and every step, [N, 140] bools equal to the envs' action masks."""
    gymnasium = pytest.importorskip("gymnasium")
    if mode is None:
        pytest.importorskip("numba")
    v = gymnasium.make_vec("allfives/AllFives-v0", num_envs=3, vectorization_mode=mode,
                           opponents=["greedy"])
    _, info = v.reset(seed=1)
    for _ in range(25):
        mask = info["action_mask"]
        assert mask.shape == (3, N_ACTIONS) and mask.dtype == bool
        live = mask.any(axis=1)
        assert live.any()
        if mode is not None:  # every live env's mask is its action_masks()
            want = np.stack(v.call("action_masks"))
            assert np.array_equal(mask[live], want[live])
        _, _, _, _, info = v.step(_first_legal(mask))
    v.close()


def test_single_env_info_mask_is_its_action_masks() -> None:
    gymnasium = pytest.importorskip("gymnasium")
    e = gymnasium.make("allfives/AllFives-v0", opponents=["greedy"])
    _, info = e.reset(seed=2)
    done = False
    while not done:
        assert np.array_equal(info["action_mask"], e.unwrapped.action_masks())
        _, _, term, trunc, info = e.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    assert not info["action_mask"].any()  # over: nothing is legal


# ---------------------------------------------------------------- the parallel route
def test_parallel_route_is_registered() -> None:
    pettingzoo = pytest.importorskip("pettingzoo")
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper

    for env_id, name in (("allfives-v1", "allfives_v1"), ("allfives_v1", "allfives_v1"),
                         ("allfives", "allfives_v1"), ("allfives_v0", "allfives_v0")):
        par = pettingzoo.make("parallel", env_id, players=3, target=61)
        assert isinstance(par, pettingzoo.ParallelEnv)
        assert isinstance(par, turn_based_aec_to_parallel_wrapper)
        assert par.unwrapped.metadata["name"] == name
        assert par.unwrapped.rules.players == 3 and par.unwrapped.rules.target == 61


@pytest.mark.parametrize("players", [2, 3, 4])
def test_parallel_api_and_seed_tests(players: int) -> None:
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the api test samples unmasked: illegal moves warn
        parallel_api_test(allfives_env.parallel_env(players=players), num_cycles=300)
        parallel_seed_test(lambda: allfives_env.parallel_env(players=players))


def test_parallel_game_plays_the_aec_game() -> None:
    """Only the agent to act moves; the game and its rewards are the AEC env's."""
    par = allfives_env.parallel_env(players=3)
    aec = env(players=3)
    obs, _ = par.reset(seed=11)
    aec.reset(seed=11)
    total = dict.fromkeys(par.possible_agents, 0.0)
    while par.agents:
        actions = {a: int(np.flatnonzero(obs[a]["action_mask"])[0]) if
                   obs[a]["action_mask"].any() else 0 for a in par.agents}
        acting = aec.agent_selection
        assert obs[acting]["action_mask"].any()
        assert sum(o["action_mask"].any() for o in obs.values()) == 1
        aec.step(actions[acting])
        obs, rewards, *_ = par.step(actions)
        for a, r in rewards.items():
            total[a] += r
        while aec.agents and (aec.terminations[aec.agent_selection]
                              or aec.truncations[aec.agent_selection]):
            aec.step(None)
    assert sorted(total.values()) == [-0.5, -0.5, 1.0]  # the win reward of 3 seats
    assert aec.game is not None and aec.game.game_over


# ------------------------- illegal actions (render without a mode: tests/test_env_behaviour.py)
def _illegal(e) -> int:
    mask = e.observe(e.agent_selection)["action_mask"]
    return next(a for a in range(N_ACTIONS) if not mask[a])


def _early_warnings(e, games: int) -> int:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for g in range(games):
            e.reset(seed=g)
            e.step(_illegal(e))
    return sum(EARLY_ILLEGAL in str(w.message) for w in seen)


def test_early_illegal_action_warns_once_per_env() -> None:
    """An unmasked collector's one-move games: the hint comes once, however many games."""
    e = env(players=2)
    assert _early_warnings(e, 5) == 1
    assert _early_warnings(e, 3) == 0  # this env has said it
    assert _early_warnings(env(players=4), 2) == 1  # another env says it again


def test_late_illegal_action_gives_only_the_usual_warning() -> None:
    e = env(players=2)
    e.reset(seed=4)
    for _ in range(12):  # past the first moves of the first hand
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(np.flatnonzero(mask)[0]))
        if e.game is not None and e.game.hand_index > 0:
            break
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        e.step(_illegal(e))
    messages = [str(w.message) for w in seen]
    assert any("illegal action" in m for m in messages)
    assert not any(EARLY_ILLEGAL in m for m in messages)


def test_raise_rule_gives_no_early_warning() -> None:
    e = env(players=2, illegal_action="raise")
    e.reset(seed=0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(ValueError):
            e.step(_illegal(e))
    assert not seen
