"""allfives_v1 against PettingZoo's own checks: api_test, seed_test, render_test, the registry.

``api_test`` plays one episode per call and reseeds with ``seed=0`` first, so each call here
runs on an env whose seeds are shifted, to cover many different games.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from typing import Any

import numpy as np
import pettingzoo
import pettingzoo.test as pzt
import pytest

import allfives_env
from allfives_env.env import AllFivesEnv, env, raw_env

SEATS = {
    "p2": {"players": 2},
    "p3": {"players": 3},
    "p4_teams": {"players": 4, "teams": True},
    "p4_solo": {"players": 4, "teams": False},
}
MORE = {
    "five_up_p3": {"preset": "five_up", "players": 3},
    "muggins_p2_points": {"preset": "muggins", "players": 2, "reward": "points"},
    "pagat_p4_hand": {"preset": "pagat", "players": 4, "episode": "hand"},
    "p3_end_of_hand": {"players": 3, "win_check": "end_of_hand", "reward": "points"},
    "p2_no_spinner_lose": {"players": 2, "spinner": False, "illegal_action": "lose"},
    "p4_short": {"players": 4, "teams": False, "target": 60, "max_hands": 2},
}
ALL = {**SEATS, **MORE}


class _Shifted(AllFivesEnv):
    """``reset(seed=s)`` plays the game of seed ``s + shift``."""

    def __init__(self, shift: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.shift = shift
        self.episodes_ended = 0

    def _end(self, truncated: bool) -> None:
        self.episodes_ended += 1
        super()._end(truncated)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        super().reset(None if seed is None else seed + self.shift, options)


def _quiet_api_test(e: Any) -> None:
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        # PettingZoo warns about every Dict observation not on its own list of envs
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        warnings.filterwarnings("ignore", message="Observation space for each agent probably")
        pzt.api_test(e, num_cycles=1000)


@pytest.mark.slow
@pytest.mark.parametrize("name", SEATS)
@pytest.mark.parametrize("shift", range(0, 10_000, 1000))
def test_api_test_many_seeds(name: str, shift: int) -> None:
    e = _Shifted(shift, **SEATS[name])
    _quiet_api_test(e)
    assert e.episodes_ended >= 1, "api_test's game should have run to its end"


@pytest.mark.parametrize("name", MORE)
@pytest.mark.parametrize("shift", (0, 777, 4242))
def test_api_test_presets_and_options(name: str, shift: int) -> None:
    _quiet_api_test(_Shifted(shift, **MORE[name]))


def test_api_test_raw_env() -> None:
    _quiet_api_test(raw_env(players=3))


@pytest.mark.parametrize("name", ALL)
def test_seed_test(name: str) -> None:
    pzt.seed_test(lambda: env(**ALL[name]))


@pytest.mark.parametrize("name", SEATS)
def test_render_test(name: str) -> None:
    def make(render_mode: str | None = None) -> AllFivesEnv:
        return env(render_mode=render_mode, **SEATS[name])

    with contextlib.redirect_stdout(io.StringIO()):  # the "human" mode prints
        pzt.render_test(make, custom_tests={"ansi": lambda s: "open ends" in s or "empty" in s})


def test_registry_make_builds_the_checked_env() -> None:
    e = pettingzoo.make("aec", "allfives_v1", players=3, reward="points")
    assert isinstance(e, AllFivesEnv)
    assert e.possible_agents == ["player_0", "player_1", "player_2"]
    assert e.reward_mode == "points"
    assert pettingzoo.spec("aec", "allfives").id == "allfives-v1"
    allfives_env.env.register()  # idempotent: no "Overriding" warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        allfives_env.env.register()


def test_package_exports() -> None:
    assert isinstance(allfives_env.env(players=2), AllFivesEnv)
    assert allfives_env.raw_env is raw_env
    import allfives_env.env as module

    assert module.raw_env is raw_env and module.env is env
    assert str(env()) == "allfives_v1" and env().metadata["name"] == "allfives_v1"


@pytest.mark.parametrize("name", SEATS)
def test_spaces_identical_across_seats_and_agents(name: str) -> None:
    e = env(**SEATS[name])
    ref = env(players=2)
    for agent in e.possible_agents:
        assert e.observation_space(agent) is e.observation_space(agent)
        assert e.observation_space(agent) == ref.observation_space("player_0")
        assert e.action_space(agent) == ref.action_space("player_0")
    assert e.state_space == ref.state_space
    e.reset(seed=1)
    assert e.state().shape == e.state_space.shape and e.state().dtype == np.float32
