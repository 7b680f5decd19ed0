"""Issue 9 item 15: SettleTurns pays every seat on its own turns, the way a library that keeps
only the rows in which an agent acted (Tianshou) sees it: per seat, the rewards of its own rows
sum to what the env paid it, for both reward modes, any seat count, and illegal-action ends."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import allfives_env
from allfives_env.envs.adapters import SETTLE_ACTION, EpisodeLog, SettleTurns


def _rows(env: SettleTurns, seed: int, illegal_at: int | None = None) -> list[tuple[str, dict]]:
    """Play one episode step by step as Tianshou's PettingZooEnv does: (acting agent, the
    rewards vector after its step) per row, until the reported termination."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    rows = []
    for k in range(10_000):
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        assert not (term or trunc)
        legal = np.flatnonzero(obs["action_mask"])
        if illegal_at == k:
            action = int(next(a for a in range(140) if not obs["action_mask"][a]))
        else:
            action = int(rng.choice(legal))
        env.step(action)
        rows.append((agent, dict(env.rewards)))
        if all(env.terminations.values()) or all(env.truncations.values()):
            return rows
    raise AssertionError("no end")


@pytest.mark.parametrize("players,reward,teams", [(2, "win", False), (3, "win", False),
                                                   (4, "win", True), (3, "points", False),
                                                   (4, "points", False)])
@pytest.mark.parametrize("seed", [0, 1])
def test_own_rows_sum_to_what_the_env_paid(players: int, reward: str, teams: bool,
                                           seed: int) -> None:
    log = EpisodeLog(allfives_env.env(players=players, reward=reward, teams=teams, target=60))
    env = SettleTurns(log)
    rows = _rows(env, seed)
    own = dict.fromkeys(env.possible_agents, 0.0)
    for agent, rewards in rows:
        own[agent] += rewards[agent]
        assert all(r == 0.0 for a, r in rewards.items() if a != agent)
    paid = log.episodes[-1]["returns"]
    assert own == pytest.approx(paid, abs=1e-9)
    if reward == "win":
        assert any(v < 0 for v in own.values())  # a losing seat got its share of -1
    last_movers = [a for a, _ in rows[-players:]]
    assert sorted(last_movers) == sorted(env.possible_agents)  # every seat has a final row


def test_settling_turns_offer_one_action_and_ignore_it() -> None:
    env = SettleTurns(allfives_env.env(players=4))
    env.reset(seed=5)
    while True:
        obs = env.observe(env.agent_selection)
        if env.unwrapped._over:
            break
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    settling = []
    while not all(env.terminations.values()):
        mask = env.observe(env.agent_selection)["action_mask"]
        assert np.flatnonzero(mask).tolist() == [SETTLE_ACTION]
        settling.append(env.agent_selection)
        env.step(139)  # any action: ignored
    assert len(settling) == 3 and len(set(settling)) == 3
    for _agent in env.agent_iter():  # then the env's own dead steps
        assert env.last()[2]
        env.step(None)
    assert env.agents == []


def test_an_illegal_action_ends_with_settling_turns() -> None:
    log = EpisodeLog(allfives_env.env(players=3))
    env = SettleTurns(log)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = _rows(env, seed=2, illegal_at=3)
    offender = rows[3][0]
    assert rows[3][1][offender] == -1.0 and len(rows) == 4 + 2
    assert log.episodes[-1]["returns"][offender] == -1.0
