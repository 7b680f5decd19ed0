"""The env's versions (issue 50): ``allfives_v1`` is current (an illegal action loses by
default), ``allfives_v0`` is kept with v0's behaviour (an illegal action raises by default) and
is otherwise identical; both are in PettingZoo's registry as ``allfives-v0``/``allfives-v1``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pettingzoo
import pytest

import allfives_env
from allfives_env import allfives_v0, allfives_v1
from allfives_env.game.tiles import N_ACTIONS


def _illegal(e: Any) -> int:
    mask = e.observe(e.agent_selection)["action_mask"]
    return next(a for a in range(N_ACTIONS) if not mask[a])


def test_v0_raises_on_an_illegal_action_by_default_and_changes_nothing() -> None:
    e = allfives_v0.env(players=3)
    e.reset(seed=4)
    agent, state = e.agent_selection, e.state()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # v0 raises: no "the game ends" warning
        with pytest.raises(ValueError, match=f"illegal action {_illegal(e)} "):
            e.step(_illegal(e))
    assert e.agent_selection == agent and not any(e.terminations.values())
    assert np.array_equal(e.state(), state) and e.illegal_action == "raise"


@pytest.mark.parametrize("make", [allfives_v1.env, allfives_v1.raw_env, allfives_env.env,
                                  allfives_env.raw_env])
def test_v1_ends_the_game_with_minus_one_for_the_offender_by_default(make: Any) -> None:
    e = make(players=3)
    e.reset(seed=4)
    offender, bad = e.agent_selection, _illegal(e)
    with pytest.warns(UserWarning, match=f"allfives_v1: illegal action {bad} "):
        e.step(bad)
    assert all(e.terminations.values())
    assert e.rewards == {a: (-1.0 if a == offender else 0.0) for a in e.possible_agents}


def test_v0_can_still_choose_lose() -> None:
    e = allfives_v0.env(players=2, illegal_action="lose")
    e.reset(seed=1)
    with pytest.warns(UserWarning, match="allfives_v0: illegal action"):
        e.step(_illegal(e))
    assert all(e.terminations.values())


def _trace(e: Any, seed: int) -> list[Any]:
    """Every observation, mask and reward of a game of random legal moves."""
    e.reset(seed=seed)
    rng, out = np.random.default_rng(seed), []
    for agent in e.agent_iter():
        obs, reward, done, cut, _ = e.last()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward))
        e.step(None if done or cut else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


@pytest.mark.parametrize("options", [{"players": 2}, {"players": 4, "reward": "points"},
                                     {"preset": "five_up", "players": 3, "episode": "hand"}])
def test_v0_and_v1_play_identical_games(options: dict[str, Any]) -> None:
    for seed in (0, 7):
        assert _trace(allfives_v0.env(**options), seed) == _trace(allfives_v1.env(**options), seed)
    v0, v1 = allfives_v0.env(), allfives_v1.env()
    assert v0.observation_space("player_0") == v1.observation_space("player_0")
    assert v0.action_space("player_0") == v1.action_space("player_0")
    assert {k: v for k, v in v0.metadata.items() if k != "name"} == {
        k: v for k, v in v1.metadata.items() if k != "name"}


def test_names() -> None:
    assert allfives_v1.ENV_NAME == "allfives_v1" == str(allfives_v1.env())
    assert allfives_v0.ENV_NAME == "allfives_v0" == str(allfives_v0.env())
    assert allfives_v1.AllFivesEnv.metadata["name"] == "allfives_v1"
    assert allfives_v0.AllFivesEnv.metadata["name"] == "allfives_v0"
    assert isinstance(allfives_v0.env(), allfives_v1.AllFivesEnv)  # one class underneath
    with pytest.raises(allfives_env.env.ResetNeededError, match="^allfives_v0: call reset"):
        allfives_v0.env().step(0)


@pytest.mark.parametrize(("name", "module", "default"), [
    ("allfives_v0", allfives_v0, "raise"), ("allfives-v0", allfives_v0, "raise"),
    ("allfives_v1", allfives_v1, "lose"), ("allfives-v1", allfives_v1, "lose"),
    ("allfives", allfives_v1, "lose")])
def test_registry_ids(name: str, module: Any, default: str) -> None:
    e = pettingzoo.make("aec", name, players=3)
    assert type(e) is module.AllFivesEnv and e.illegal_action == default
    assert e.metadata["name"] == module.ENV_NAME and e.possible_agents[-1] == "player_2"


def test_registered_ids_and_registering_again_is_silent() -> None:
    ids = {k for k in pettingzoo.aec_registry if k.startswith("allfives")}
    assert ids == {"allfives-v0", "allfives-v1"}
    assert pettingzoo.spec("aec", "allfives").id == "allfives-v1"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        allfives_env.env.register()
