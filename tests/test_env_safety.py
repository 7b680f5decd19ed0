"""What the envs hand out is the caller's, and what they are handed is checked.

* ``observe()`` / ``last()`` of the AEC env, and every array the VectorEnvs return, may be
  changed in place by the caller without changing what the env returns next;
* ``reset(seed=...)`` takes an int >= 0 (numpy integers too) or ``None``, and refuses anything
  else (``1.5``, ``"x"``, ``True``) in one line, changing nothing;
* the VectorEnvs (batched and scalar fallback) refuse NaN, inf, 5.7, ``"1"``, a wrong shape or a
  value out of ``0..139`` in one line before any game moves; a masked-out action in range ends
  that game as a loss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import allfives_env
from allfives_env.game.rules import make_rules

BAD_SEEDS = [1.5, "x", "7", True, False, -1, np.float64(2.0), 2.0, [3], b"1"]
VECTOR_BAD_SEEDS = [s for s in BAD_SEEDS if not isinstance(s, list)]  # a list: one per env
OPPONENTS = [{"agent": "greedy", "weight": 1.0}, {"agent": "random", "weight": 1.0}]


def _one_line_seed_error(call: Callable[[], Any], seed: Any) -> None:
    with pytest.raises(ValueError, match="an int >= 0 or None") as info:
        call()
    assert f"={seed!r}: a seed must be" in str(info.value) and "\n" not in str(info.value)


# ------------------------------------------------------------------ the AEC env
def _snapshot(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v.copy() for k, v in obs.items()}


def _scribble(obs: dict[str, np.ndarray]) -> None:
    obs["observation"][:] = 99.0
    obs["action_mask"][:] = 1


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return all(np.array_equal(a[k], b[k]) for k in ("observation", "action_mask"))


def test_observe_and_last_hand_out_arrays_the_caller_may_change() -> None:
    env = allfives_env.env(players=3)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        agent = env.agent_selection
        for who in env.possible_agents:  # the agent to act (cached) and the others
            first = env.observe(who)
            kept = _snapshot(first)
            _scribble(first)
            assert _same(env.observe(who), kept), who
        obs, *_ = env.last()
        kept = _snapshot(obs)
        _scribble(obs)
        again, *_ = env.last()
        assert _same(again, kept)
        legal = np.flatnonzero(kept["action_mask"])
        assert legal.size and env.observe(agent)["action_mask"].sum() == legal.size
        env.step(int(rng.choice(legal)))
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            break


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_aec_reset_refuses_non_integer_seeds(seed: Any) -> None:
    env = allfives_env.env()
    env.reset(seed=3)
    kept, agent = _snapshot(env.observe(env.agent_selection)), env.agent_selection
    _one_line_seed_error(lambda: env.reset(seed=seed), seed)
    assert env.agent_selection == agent and _same(env.observe(agent), kept)


@pytest.mark.parametrize("seed", [np.int64(7), np.uint8(7), np.int32(7)], ids=repr)
def test_aec_reset_takes_numpy_integers(seed: Any) -> None:
    a, b = allfives_env.env(), allfives_env.env()
    a.reset(seed=7)
    b.reset(seed=seed)
    assert _same(a.observe(a.agent_selection), b.observe(b.agent_selection))
    assert type(b.episode_seed) is int and b.episode_seed == 7


# ------------------------------------------------------------------ the batched engine
@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_batched_seeds_are_ints(seed: Any) -> None:
    pytest.importorskip("numba")
    from allfives_env.batched_engine.games import BatchedGames

    _one_line_seed_error(lambda: BatchedGames(make_rules(), 2, seed=seed), seed)
    games = BatchedGames(make_rules(), 2, seed=0)
    games.reset()
    master = games.master.copy()
    _one_line_seed_error(lambda: games.reset(seed=seed), seed)
    _one_line_seed_error(lambda: games.seed(seed), seed)
    assert np.array_equal(games.master, master)


def test_batched_takes_numpy_integer_seeds() -> None:
    pytest.importorskip("numba")
    from allfives_env.batched_engine.games import BatchedGames

    a, b = BatchedGames(make_rules(), 4, seed=5), BatchedGames(make_rules(), 4, seed=np.int16(5))
    a.reset()
    b.reset()
    assert np.array_equal(a.observe(), b.observe())


def test_batched_observations_may_be_changed_in_place() -> None:
    pytest.importorskip("numba")
    from allfives_env.batched_engine.games import BatchedGames

    games = BatchedGames(make_rules(players=4), 8, seed=1)
    games.reset()
    obs, mask = games.observe_and_mask()
    kept_obs, kept_mask = obs.copy(), mask.copy()
    obs[:] = 99.0
    mask[:] = True
    games.legal_mask()[:] = False
    games.observe_seat(games.current)[:] = -5.0
    obs, mask = games.observe_and_mask()
    assert np.array_equal(obs, kept_obs) and np.array_equal(mask, kept_mask)
    assert np.array_equal(games.observe(), kept_obs)
    assert np.array_equal(games.legal_mask(), kept_mask)


# ------------------------------------------------------------------ the VectorEnvs
def _batched(num_envs: int, seed: Any = 0) -> Any:
    pytest.importorskip("numba")
    from allfives_train.games.vector_env import AllFivesVectorEnv

    return AllFivesVectorEnv(make_rules(), num_envs=num_envs, opponents=OPPONENTS, seed=seed)


def _fallback(num_envs: int, seed: Any = 0) -> Any:
    from allfives_train.games.vector_fallback import ScalarLoopVectorEnv

    return ScalarLoopVectorEnv(make_rules(), num_envs, OPPONENTS, seed=seed)


VECTOR_ENVS = pytest.mark.parametrize("make", [_batched, _fallback], ids=["batched", "fallback"])


def _legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(mask.shape) * mask).argmax(axis=1)


def _bad_actions(n: int, legal: np.ndarray) -> list[tuple[str, Any]]:
    def one(value: Any, dtype: Any = None) -> Any:
        out: list[Any] = legal.tolist()
        out[1] = value
        return np.array(out, dtype=dtype) if dtype is not None else out

    return [("nan", one(np.nan, float)), ("inf", one(np.inf, float)), ("5.7", one(5.7, float)),
            ("5.0", np.asarray(legal, dtype=float)), ("'1'", one("1")),
            ("str array", np.array([str(a) for a in legal])), ("bool", one(True)),
            ("None", one(None)), ("(N, 1)", legal.reshape(n, 1)), ("(N+1,)", np.append(legal, 0)),
            ("scalar", 0), ("140", one(140)), ("-1", one(-1)), ("2**40", one(2**40)),
            ("uint8 200", one(200, np.uint8))]


@VECTOR_ENVS
def test_vector_step_refuses_bad_actions_and_moves_nothing(make: Callable[..., Any]) -> None:
    n = 3
    env, twin = make(n), make(n)
    rng = np.random.default_rng(0)
    _, infos = env.reset(seed=4)
    twin.reset(seed=4)
    for _ in range(3):
        legal = _legal(infos["action_mask"], rng)
        for name, bad in _bad_actions(n, legal):
            with pytest.raises(ValueError, match="actions|action per game") as info:
                env.step(bad)
            assert "\n" not in str(info.value), name
        out, ref = env.step(legal), twin.step(legal)  # the refused calls changed nothing
        for a, b in zip(out[:4], ref[:4]):
            assert np.array_equal(a, b)
        infos = out[4]
        assert np.array_equal(infos["action_mask"], ref[4]["action_mask"])


@VECTOR_ENVS
def test_vector_masked_out_action_ends_that_game_as_a_loss(make: Callable[..., Any]) -> None:
    env = make(3)
    _, infos = env.reset(seed=0)
    actions = infos["action_mask"].argmax(axis=1)
    actions[2] = int(np.flatnonzero(~infos["action_mask"][2])[0])
    _, reward, term, trunc, infos = env.step(actions)
    assert term[2] and not trunc[2] and reward[2] == -2.0
    assert infos["action_mask"][2].any()  # a new game is ready in the slot


@VECTOR_ENVS
@pytest.mark.parametrize("seed", VECTOR_BAD_SEEDS, ids=repr)
def test_vector_reset_refuses_non_integer_seeds(make: Callable[..., Any], seed: Any) -> None:
    _one_line_seed_error(lambda: make(2, seed=seed), seed)
    env = make(2)
    env.reset(seed=1)
    kept = env.action_masks()
    _one_line_seed_error(lambda: env.reset(seed=seed), seed)
    _one_line_seed_error(lambda: env.reset(seed=[seed, 1]), seed)
    _one_line_seed_error(lambda: env.reset(seed=[1, seed]), seed)
    assert np.array_equal(env.action_masks(), kept)


@VECTOR_ENVS
def test_vector_reset_takes_numpy_integers_and_seed_lists(make: Callable[..., Any]) -> None:
    obs = [make(2).reset(seed=s)[0] for s in (9, np.int64(9), np.uint16(9), [9, 4])]
    assert all(np.array_equal(obs[0], o) for o in obs[1:])


@VECTOR_ENVS
def test_vector_arrays_may_be_changed_in_place(make: Callable[..., Any]) -> None:
    """Two envs, same seed: scribbling over everything one returns changes nothing it does."""
    n = 4
    env, twin = make(n), make(n)
    rng = np.random.default_rng(1)
    out, ref = env.reset(seed=2), twin.reset(seed=2)
    for _ in range(40):
        assert np.array_equal(out[0], ref[0])
        assert np.array_equal(out[-1]["action_mask"], ref[-1]["action_mask"])
        actions = _legal(ref[-1]["action_mask"], rng)
        for arr in (out[0], out[-1]["action_mask"], env.action_masks()):
            arr[...] = 1
        for final in out[-1].get("final_obs", []):
            if final is not None:
                final[...] = 7.0
        assert np.array_equal(env.action_masks(), twin.action_masks())
        out, ref = env.step(actions), twin.step(actions)
        for a, b in zip(out[1:4], ref[1:4]):
            assert np.array_equal(a, b)
        for a, b in zip(out[-1].get("final_obs", []), ref[-1].get("final_obs", [])):
            assert (a is None) == (b is None) and (a is None or np.array_equal(a, b))
