"""allfives_v1 behaviour: rewards, episode ends, illegal and bad actions, order, seeding,
masks and observations. Rewards are checked against the engine's final scores, computed
independently of the env's reward code."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from allfives_env.env import AllFivesEnv, ResetNeededError, env, raw_env
from allfives_env.game.observation import encode_state, observe
from allfives_env.game.rules import RulesError
from allfives_env.game.tiles import N_ACTIONS, action_to_str


def play(e: AllFivesEnv, seed: int, policy_seed: int = 0) -> dict[str, Any]:
    """One episode of uniform random legal play; the rewards seen two ways."""
    e.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    step_sum = dict.fromkeys(e.possible_agents, 0.0)
    last_sum = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        last_sum[agent] += reward
        if terminated or truncated:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        e.step(action)
        for a, r in e.rewards.items():
            step_sum[a] += r
    return {"step_sum": step_sum, "last_sum": last_sum, "game": e.game}


def side_of(e: AllFivesEnv, agent: str) -> int:
    return e.rules.side_of(e.agent_seat[agent])


# ---------------------------------------------------------------------- rewards
@pytest.mark.parametrize("kwargs", [{"players": 2}, {"players": 3}, {"players": 4},
                                    {"players": 4, "teams": False},
                                    {"preset": "pagat", "players": 3},
                                    {"players": 2, "episode": "hand"}])
def test_points_rewards_sum_to_score_margin_and_are_zero_sum(kwargs: dict) -> None:
    e = env(reward="points", **kwargs)
    for seed in range(4):
        out = play(e, seed)
        scores = out["game"].scores
        mean = sum(scores) / len(scores)
        for agent in e.possible_agents:
            expected = (scores[side_of(e, agent)] - mean) / e.rules.target
            assert out["step_sum"][agent] == pytest.approx(expected, abs=1e-9)
            assert out["last_sum"][agent] == pytest.approx(expected, abs=1e-9)
            assert abs(expected) < 3.0
        assert sum(out["step_sum"].values()) == pytest.approx(0.0, abs=1e-9)


def test_points_reward_of_one_scoring_play() -> None:
    e = env(players=3, reward="points")
    for seed in range(40):
        e.reset(seed=seed)
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        scoring = [a for a in legal if e.game.points_if(int(a))]
        if scoring:
            actor, before = e.agent_selection, list(e.game.scores)
            e.step(int(scoring[0]))
            gained = e.game.scores[e.agent_seat[actor]] - before[e.agent_seat[actor]]
            assert gained > 0
            for agent in e.possible_agents:
                share = gained * (2 / 3 if agent == actor else -1 / 3) / e.rules.target
                assert e.rewards[agent] == pytest.approx(share)
            return
    pytest.fail("no seed gave a scoring lead")


@pytest.mark.parametrize("kwargs, loser_share", [
    ({"players": 2}, -1.0), ({"players": 4, "teams": True}, -1.0),
    ({"players": 3}, -0.5), ({"players": 4, "teams": False, "target": 100}, -1 / 3)])
def test_win_rewards(kwargs: dict, loser_share: float) -> None:
    e = env(**kwargs)
    for seed in range(3):
        out = play(e, seed)
        game = out["game"]
        assert game.game_over and game.winner is not None and not game.truncated
        for agent in e.possible_agents:
            expected = 1.0 if side_of(e, agent) == game.winner else loser_share
            assert out["step_sum"][agent] == pytest.approx(expected)
            assert out["last_sum"][agent] == pytest.approx(expected)
        assert sum(out["step_sum"].values()) == pytest.approx(0.0)


def test_truncated_game_gives_zero_and_truncations() -> None:
    e = env(players=2, target=1000, max_hands=1)
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    while not any(e.truncations.values()):
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert e.game.truncated and all(v == 0.0 for v in e._cumulative_rewards.values())


def test_hand_episode_ends_after_one_hand() -> None:
    e = env(players=2, episode="hand")
    ties = wins = 0
    for seed in range(60):
        out = play(e, seed)
        game = out["game"]
        assert game.hand_over and game.hand_index == 0 and len(game.history) == 1
        top = max(game.scores)
        leaders = [i for i, s in enumerate(game.scores) if s == top]
        for agent in e.possible_agents:
            if len(leaders) > 1:
                expected = 0.0
            else:
                expected = 1.0 if side_of(e, agent) == leaders[0] else -1.0
            assert out["step_sum"][agent] == expected
        ties += len(leaders) > 1
        wins += len(leaders) == 1
    assert ties and wins, "both a tied and a won hand should occur in 60 seeds"


# ---------------------------------------------------------------------- bad actions
def _snapshot(e: AllFivesEnv) -> tuple:
    obs = {a: e.observe(a)["observation"].copy() for a in e.agents}
    return (e.state().tobytes(), e.agent_selection, dict(e.rewards), dict(e._cumulative_rewards),
            dict(e.terminations), len(e.game.log), {a: o.tobytes() for a, o in obs.items()})


def test_illegal_action_raises_and_changes_nothing() -> None:
    e = env(players=3, illegal_action="raise")
    e.reset(seed=2)
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    legal = [int(a) for a in np.flatnonzero(e.observe(e.agent_selection)["action_mask"])]
    bad = next(a for a in range(N_ACTIONS) if a not in legal)
    before = _snapshot(e)
    with pytest.raises(ValueError) as info:
        e.step(bad)
    msg = str(info.value)
    assert f"illegal action {bad} ({action_to_str(bad)}) for {e.agent_selection}" in msg
    for a in legal:
        assert f"{a} ({action_to_str(a)})" in msg
    assert _snapshot(e) == before


def test_illegal_action_lose_ends_the_game_with_a_penalty() -> None:
    e = env(players=3, illegal_action="lose")
    e.reset(seed=2)
    offender = e.agent_selection
    legal = set(np.flatnonzero(e.observe(offender)["action_mask"]).tolist())
    log_len = len(e.game.log)
    e.step(next(a for a in range(N_ACTIONS) if a not in legal))
    assert all(e.terminations.values()) and len(e.game.log) == log_len
    assert e.rewards == {a: (-1.0 if a == offender else 0.0) for a in e.possible_agents}
    seen = {}
    for agent in e.agent_iter():
        _, reward, terminated, _, _ = e.last()
        assert terminated and not e.observe(agent)["action_mask"].any()
        seen[agent] = reward
        e.step(None)
    assert seen == {a: (-1.0 if a == offender else 0.0) for a in e.possible_agents}


@pytest.mark.parametrize("bad", [-1, N_ACTIONS, 10**9, 1.5, "3", np.float32(2.0), True,
                                 [1, 2], None])
def test_not_an_action_raises_with_the_range(bad: Any) -> None:
    e = env(players=2, illegal_action="lose")
    e.reset(seed=0)
    before = _snapshot(e)
    with pytest.raises(ValueError, match=f"0..{N_ACTIONS - 1}"):
        e.step(bad)
    assert _snapshot(e) == before


@pytest.mark.parametrize("wrap", [int, np.int64, np.int32, np.array])
def test_numpy_integer_actions_are_accepted(wrap: Any) -> None:
    e = env(players=2)
    e.reset(seed=0)
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
    e.step(wrap(int(legal[0])))
    assert len(e.game.log) >= 1


def test_dead_agent_must_step_none() -> None:
    e = env(players=2, illegal_action="lose")
    e.reset(seed=0)
    e.step(next(a for a in range(N_ACTIONS)
                if not e.observe(e.agent_selection)["action_mask"][a]))
    with pytest.raises(ValueError, match="None"):
        e.step(0)


@pytest.mark.parametrize("call", ["step", "last", "observe", "state", "render"])
def test_calls_before_reset_raise(call: str) -> None:
    e = raw_env(players=2, render_mode="ansi")
    args = {"step": (0,), "observe": ("player_0",)}.get(call, ())
    with pytest.raises(ResetNeededError, match="call reset"):
        getattr(e, call)(*args)
    assert not hasattr(e, "agents") and not hasattr(e, "rewards")
    with pytest.raises(RuntimeError):  # also a RuntimeError, as the error says what to do
        getattr(e, call)(*args)


def test_step_after_every_agent_left_asks_for_reset() -> None:
    e = env(players=2, illegal_action="lose")
    e.reset(seed=0)
    e.step(next(a for a in range(N_ACTIONS)
                if not e.observe(e.agent_selection)["action_mask"][a]))
    e.step(None)
    e.step(None)
    assert not e.agents
    with pytest.raises(ResetNeededError, match="episode is over"):
        e.step(None)
    e.reset(seed=0)
    assert e.agents == e.possible_agents


def test_unknown_agent_is_a_clear_error() -> None:
    e = env(players=2)
    e.reset(seed=0)
    with pytest.raises(ValueError, match="player_0, player_1"):
        e.observe("player_7")


@pytest.mark.parametrize("kwargs, match", [
    ({"reward": "score"}, "reward='score': allowed values are 'win', 'points'"),
    ({"episode": "round"}, "episode='round': allowed values are 'game', 'hand'"),
    ({"illegal_action": "skip"}, "illegal_action='skip'"),
    ({"render_mode": "rgb"}, "render_mode='rgb': allowed values are 'ansi', 'rgb_array'"),
])
def test_bad_env_options(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        env(**kwargs)


def test_bad_rule_options_come_from_make_rules() -> None:
    with pytest.raises(RulesError, match="players must be 2, 3 or 4"):
        env(players=5)
    with pytest.raises(RulesError, match="unknown rule option"):
        raw_env(colour="red")
    with pytest.raises(ValueError, match="not both"):
        env("five_up", rules=env().rules)


def test_render_without_mode_warns_and_returns_none() -> None:
    """PettingZoo's convention: no render_mode, nothing rendered, a warning naming the modes."""
    e = env()
    e.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode one of ansi, rgb_array, human"):
        assert e.render() is None


# ---------------------------------------------------------------------- determinism
def test_same_seed_same_record_and_observations() -> None:
    def trajectory(seed: int) -> tuple[list, dict]:
        e = env(players=4, teams=False)
        out = play(e, seed, policy_seed=9)
        return [out["step_sum"]], e.record(agents=["random"] * 4)

    a, b, c = trajectory(7), trajectory(7), trajectory(8)
    assert a == b and a[1]["seed"] == 7 and a[1]["hands"]
    assert c[1]["hands"] != a[1]["hands"]


def test_reset_without_seed_continues_the_stream() -> None:
    e = env(players=2)
    e.reset(seed=5)
    first = e.state().copy()
    e.reset()
    second = e.state().copy()
    e.reset(seed=5)
    assert np.array_equal(e.state(), first) and not np.array_equal(first, second)


# ---------------------------------------------------------------------- observations
@pytest.mark.parametrize("kwargs", [{"players": 2}, {"players": 3}, {"players": 4},
                                    {"players": 4, "teams": False, "episode": "hand"}])
def test_masks_observations_and_state_through_a_game(kwargs: dict) -> None:
    e = env(**kwargs)
    e.reset(seed=11)
    rng = np.random.default_rng(1)
    for agent in e.agent_iter():
        obs, _, terminated, truncated, _ = e.last()
        game = e.game
        assert e.state_space.contains(e.state())
        assert np.array_equal(e.state(), encode_state(game))
        for other in e.agents:
            o = e.observe(other)
            assert e.observation_space(other).contains(o)
            live = other == agent and not (terminated or truncated)
            assert bool(o["action_mask"].any()) == live
            if not live:
                assert np.array_equal(o["observation"], observe(game, e.agent_seat[other], []))
        if terminated or truncated:
            e.step(None)
            continue
        assert e.agent_seat[agent] == game.current
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.tolist() == game.legal_actions()
        assert np.array_equal(obs["observation"], observe(game, game.current))
        e.step(int(rng.choice(legal)))
    assert not e.agents


# ---------------------------------------------------------------------- bench command
def test_play_random_plays_a_game_out_with_uniform_picks_from_the_pool() -> None:
    """``bench.play_random``: the game ends, every decision is counted, and each pick is
    ``legal[int(u * len(legal))]`` with ``u`` popped from the pool (refilled when empty)."""
    from allfives_env.benchmarks.bench import play_random
    from allfives_env.game.engine import GameState
    from allfives_env.game.rules import make_rules

    rules = make_rules(players=3)
    g = GameState(rules, 5, log=False)
    draws: list[float] = []
    n = play_random(g, np.random.default_rng(1), draws)
    assert g.game_over and n > 0
    twin, pool, rng, made = GameState(rules, 5, log=False), [], np.random.default_rng(1), 0
    while not twin.game_over:
        if twin.hand_over:
            twin.next_hand()
            continue
        legal = twin.legal_actions()
        pool = pool or rng.random(4096).tolist()
        twin.apply(legal[int(pool.pop() * len(legal))])
        made += 1
    assert (n, draws) == (made, pool)
    assert twin.scores == g.scores


def test_bench_command_runs_and_writes_json(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """A smoke test of ``allfives bench`` (it reports speeds; no speed is asserted here). The
    connect_four_v3 row is there exactly when pygame (the ``bench`` extra) is installed."""
    import importlib.util
    import json

    from allfives.cli import main

    out = tmp_path / "bench.json"
    assert main(["bench", "--seconds", "0.4", "--rounds", "1", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    names = [r["name"] for r in result["rows"]]
    c4 = importlib.util.find_spec("pygame") is not None
    assert result["connect_four_available"] == c4
    own = ["engine", "raw_env()", "env()"] + (["connect_four_v3 env()"] if c4 else [])
    assert names[:len(own)] == own
    batched = ["batched B=64", "batched B=1024", "batched B=4096"]
    assert names[len(own):] == (batched if result["batched_available"] else [])
    assert all(r["steps"] > 0 and r["rate"] > 0 for r in result["rows"])
    text = capsys.readouterr().out
    assert ("env / connect_four_v3 env" in text) == c4
    assert ("pip install 'allfives[bench]'" in text) == (not c4)
    assert main(["bench", "--seconds", "0"]) == 2
