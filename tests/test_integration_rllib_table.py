"""The RLlib backend's table env (opponent pool, shaped reward), its config fields and the
local-Ray start, without starting Ray."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from allfives_env.envs.adapters import rllib_aec_env  # noqa: E402
from allfives_env.game.observation import observe  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, load_config  # noqa: E402
from allfives_train.rllib import mapping  # noqa: E402
from allfives_train.rllib.section import env_config, uses_table  # noqa: E402

TABLE_CONFIG = DEFAULT_CONFIG.parent / "rllib_table.yaml"
from allfives_train.rllib.table import AllFivesTable  # noqa: E402


def play(env: AllFivesTable, games: int, seed: int = 0) -> list[dict]:
    """Random legal play; per game: each agent's summed reward, its margin when first seen,
    the final state's margin and winner, the ids seen."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        obs, _ = env.reset(seed=seed * 1000 + g)
        total: dict[str, float] = {}
        first: dict[str, float] = {}
        while True:
            (agent, o), = obs.items()
            first.setdefault(agent, env._margin(agent))
            seat = int(agent.rsplit("_", 1)[1])
            assert seat == env.state.current
            legal = env.state.legal_actions()
            assert np.array_equal(np.flatnonzero(o["action_mask"]), sorted(legal))
            assert np.array_equal(o["observations"], observe(env.state, seat, legal))
            obs, rew, term, trunc, _ = env.step({agent: int(rng.choice(legal))})
            for a, r in rew.items():
                total[a] = total.get(a, 0.0) + r
                first.setdefault(a, env._margin(a))
            if term["__all__"] or trunc["__all__"]:
                assert set(obs) == set(env.agents) == set(rew)
                assert all(term[a] or trunc[a] for a in obs)
                break
        out.append({"total": total, "first": first, "winner": env.state.winner,
                    "final": {a: env._margin(a) for a in total}, "agents": set(env.agents)})
    return out


@pytest.mark.parametrize("players,teams", [(2, False), (3, False), (4, True)])
def test_without_a_pool_every_seat_is_an_agent_and_gets_the_win_reward(players: int,
                                                                       teams: bool) -> None:
    env = AllFivesTable({"players": players, "teams": teams, "target": 61,
                         "margin_reward": 0.0, "win_reward": 1.0})
    rules = env.rules
    for game in play(env, 3, seed=players):
        assert game["agents"] == {f"player_{s}" for s in range(players)}
        for agent, r in game["total"].items():
            side = rules.side_of(int(agent.rsplit("_", 1)[1]))
            want = 1.0 if side == game["winner"] else -1.0 / (rules.n_sides - 1)
            assert r == pytest.approx(want)


def test_shaped_reward_is_the_margin_gained_since_the_first_decision_plus_the_win() -> None:
    env = AllFivesTable({"players": 3, "margin_reward": 0.5, "win_reward": 2.0,
                         "opponents": [{"agent": "self"}]})
    target, n_sides = env.rules.target, env.rules.n_sides
    for game in play(env, 3, seed=5):
        for agent, r in game["total"].items():
            side = env.rules.side_of(int(agent.rsplit("_", 1)[1]))
            win = 2.0 if side == game["winner"] else -2.0 / (n_sides - 1)
            margin = 0.5 * (game["final"][agent] - game["first"][agent]) / target
            assert r == pytest.approx(margin + win)


def test_fixed_bots_play_inside_the_env_and_the_learner_takes_either_side() -> None:
    env = AllFivesTable({"players": 4, "teams": True, "opponents": [{"agent": "greedy"}]})
    seen = set()
    for game in play(env, 6, seed=2):
        seats = sorted(int(a.rsplit("_", 1)[1]) for a in game["agents"])
        assert seats in ([0, 2], [1, 3]) and all(a.startswith("player_") for a in game["agents"])
        seen.add(tuple(seats))
    assert seen == {(0, 2), (1, 3)}


def test_snapshot_opponents_are_their_own_agents_and_map_to_a_snapshot() -> None:
    env = AllFivesTable({"players": 2, "opponents": [{"agent": "snapshots"}]})
    game = play(env, 1)[0]
    assert sorted(a.split("_")[0] for a in game["agents"]) == ["opponent", "player"]
    rules = env.rules
    fn = mapping.make_mapping("shared", rules, ["snap_1", "snap_2"])
    assert fn("player_0", None) == "main"
    assert {fn("opponent_1", f"episode-{k}") for k in range(20)} == {"snap_1", "snap_2"}
    assert mapping.make_mapping("shared", rules) is mapping.shared


def test_table_spaces_are_the_aec_adapters_so_checkpoints_play_as_rllib_agents() -> None:
    env = AllFivesTable({"players": 2})
    aec = rllib_aec_env(players=2)
    assert env.observation_spaces["player_1"] == aec.observation_space("player_1")
    assert env.action_spaces["opponent_0"] == aec.action_space("player_0")


@pytest.mark.parametrize("overrides,message", [
    ({"opponents": [{"agent": "greedy"}], "rllib_policy": "per_seat"},
     "needs rllib.policy shared"),
    ({"reward": "shaped", "episode": "hand"}, "must be game with reward shaped"),
    ({"opponents": [{"agent": "nobody"}]}, "nobody"),
    ({"opponents": [{"agent": "greedy", "weight": -1}]}, "agent and weight \\(a number >= 0\\)"),
    ({"rllib_bc_teacher": "nobody"}, "nobody"),
    ({"time_limit": -1}, "time_limit=-1.0: must be a number of seconds >= 0"),
    ({"reward": "margin"}, "must be one of win, points, shaped"),
])
def test_bad_pool_and_reward_values_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_config(TABLE_CONFIG, overrides)


def test_shaped_env_config_and_the_cli_pool_syntax() -> None:
    from allfives_train.cli import add_arguments, overrides_from

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--backend", "rllib", "--opponents", "greedy@2", "self",
                              "--margin-reward", "0.5", "--set", "reward=shaped"])
    cfg = load_config(TABLE_CONFIG, overrides_from(args))
    assert cfg.value("opponents") == [{"agent": "greedy", "weight": 2.0}, {"agent": "self",
                                                                           "weight": 1.0}]
    assert uses_table(cfg)
    env_cfg = env_config(cfg)
    assert (env_cfg["margin_reward"], env_cfg["win_reward"]) == (0.5, 1.0)
    points = load_config(TABLE_CONFIG, {"reward": "points", "opponents": [
        {"agent": "greedy"}]})
    points = env_config(points)
    assert (points["margin_reward"], points["win_reward"]) == (1.0, 0.0)
    plain = load_config(TABLE_CONFIG, {"reward": "win", "opponents": []})
    assert not uses_table(plain) and env_config(plain)["reward"] == "win"


def test_without_address_the_trainer_starts_its_own_ray(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """``address="local"``: a stale cluster file or RAY_ADDRESS must not be joined."""
    import ray

    from allfives_train.rllib.run import init_ray

    calls: list[dict] = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: calls.append(kw))
    cfg = load_config(TABLE_CONFIG, {"num_cpus": 1})
    init_ray(cfg, None)
    init_ray(cfg, "auto")
    assert calls[0]["address"] == "local" and calls[0]["num_cpus"] == 1
    assert calls[1]["address"] == "auto" and "num_cpus" not in calls[1]
