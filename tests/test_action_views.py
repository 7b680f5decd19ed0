"""The action views (option ``action_view``, allfives_env/envs/action_views.py): the same rows in
the
AEC env, the Gymnasium env, the VectorEnv and the batched engine over random games of 2, 3
and 4 seats; zero rows for illegal actions; the spaces; one clear line for a bad value; and
known values of the ``facts`` view in set positions."""

from __future__ import annotations

import dataclasses
import re

import gymnasium
import numpy as np
import pytest

import allfives_env
from allfives_agents.features.action_features import FEATURES, N_FEATURES
from allfives_env.envs.action_views import (
    ACTION_VIEWS,
    FACT_COLUMN,
    FACT_NAMES,
    action_view_features,
    action_view_names,
)
from allfives_env.game.engine import GameState
from allfives_env.game.observation import OBS_SIZE, observe
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ACTIONS, str_to_action
from allfives_env.game.view import SeatView

VIEWS = ("facts", "heuristic")
TABLES = [("all_fives", 2, False), ("five_up", 3, False), ("all_fives", 4, True),
          ("muggins", 4, False)]


def test_names_sizes_and_constants() -> None:
    assert ACTION_VIEWS == ("raw", "facts", "heuristic")
    assert action_view_names("raw") == ()
    assert action_view_names("facts") == FACT_NAMES and len(FACT_NAMES) == 62
    assert action_view_names("heuristic") == FEATURES and len(FEATURES) == N_FEATURES == 17
    assert allfives_env.OBS_SIZE == OBS_SIZE == 386 and allfives_env.N_ACTIONS == 140


@pytest.mark.parametrize("make", [
    lambda v: allfives_env.env(action_view=v),
    lambda v: gymnasium.make("allfives/AllFives-v0", action_view=v),
    lambda v: allfives_env.action_view_names(v),
])
@pytest.mark.parametrize("bad", ["Facts", "", None, 1, "heuristic/6"])
def test_a_bad_value_is_one_line_naming_the_allowed(make, bad: object) -> None:
    with pytest.raises(ValueError) as err:
        make(bad)
    text = str(err.value)
    assert "\n" not in text and "'raw', 'facts', 'heuristic'" in text


def _rows_ok(rows: np.ndarray, mask: np.ndarray, view: str) -> None:
    assert rows.dtype == np.float32 and rows.shape == (N_ACTIONS, len(action_view_names(view)))
    assert not rows[mask == 0].any()  # zeros on illegal rows
    if view == "facts":  # every legal row names its tile and its end
        assert (rows[mask == 1].any(axis=1)).all()


@pytest.mark.parametrize("preset,players,teams", TABLES)
@pytest.mark.parametrize("view", VIEWS)
def test_aec_env_rows_are_the_seats_rows(view: str, preset: str, players: int,
                                         teams: bool) -> None:
    env = allfives_env.env(preset, players=players, teams=teams, action_view=view)
    space = env.observation_space(env.possible_agents[0])
    rng = np.random.default_rng(players)
    checked = 0
    for game in range(3):
        env.reset(seed=game)
        for agent in env.agent_iter(max_iter=120):  # the first hands of 3 games
            obs, _, term, trunc, _ = env.last()
            assert space.contains(obs)
            if term or trunc:
                env.step(None)
                continue
            seat = env.agent_seat[agent]
            _rows_ok(obs["action_features"], obs["action_mask"], view)
            want = action_view_features(SeatView.of(env.game, seat), view)
            assert np.array_equal(obs["action_features"], want)
            other = env.possible_agents[(seat + 1) % players]
            assert not env.observe(other)["action_features"].any()  # not to act: zeros
            checked += 1
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert checked > 50


@pytest.mark.parametrize("preset,players,teams", TABLES)
@pytest.mark.parametrize("view", VIEWS)
def test_gymnasium_env_appends_the_learners_rows(view: str, preset: str, players: int,
                                                 teams: bool) -> None:
    env = gymnasium.make("allfives/AllFives-v0", preset=preset, players=players, teams=teams,
                         action_view=view, opponents=["greedy"])
    width = len(action_view_names(view))
    assert env.observation_space.shape == (OBS_SIZE + N_ACTIONS * width,)
    rng = np.random.default_rng(0)
    checked = 0
    obs, _ = env.reset(seed=3)
    for _ in range(200):
        inner = env.unwrapped
        assert env.observation_space.contains(obs)
        assert np.array_equal(obs[:OBS_SIZE], observe(inner.game, inner.seat, inner._legal))
        rows = obs[OBS_SIZE:].reshape(N_ACTIONS, width)
        mask = inner.action_masks()
        _rows_ok(rows, mask.astype(np.int8), view)
        assert np.array_equal(rows, action_view_features(SeatView.of(inner.game, inner.seat),
                                                         view))
        checked += 1
        obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            assert not obs[OBS_SIZE:].any()
            obs, _ = env.reset()
    assert checked == 200


# ---------------------------------------------------------------------- the batched engine
def seat_view_of(games, b: int) -> SeatView:
    """The :class:`SeatView` of game ``b``'s seat to act, read from the batched arrays (the
    inverse of ``allfives_env.batched_engine.view.games_from_view``)."""
    k, rules = games.k, games.rules
    G, A, T = games.G[b], games.A[b], games.T[b]
    n, seat = rules.players, int(G[k.F_CUR])
    state = SeatView(
        seat=seat, rules=rules, hand=int(A[k.R_HANDS, seat]), legal=(), current=seat,
        leader=int(G[k.F_LEADER]), hand_index=int(G[k.F_HAND_IDX]),
        ends=tuple(int(x) for x in A[k.R_ENDS]), dbl=tuple(bool(x) for x in A[k.R_DBL]),
        cnt=tuple(int(x) for x in A[k.R_CNT]), n_arms=int(G[k.F_NARMS]),
        n_played=int(G[k.F_NPLAYED]), lead_tile=int(G[k.F_LEAD_TILE]),
        spinner=int(G[k.F_SPINNER]), spin_wait=int(G[k.F_SPIN_WAIT]),
        forced_lead=int(G[k.F_FORCED]), played_by=tuple(int(x) for x in T[k.T_PLAYED]),
        hand_sizes=tuple(int(A[k.R_HANDS, s]).bit_count() for s in range(n)),
        boneyard_size=28 - int(G[k.F_BONE_POS]),
        drawable=int(G[k.F_BONE_END] - G[k.F_BONE_POS]),
        lacks=tuple(int(x) for x in A[k.R_LACKS, :n]),
        scores=tuple(int(x) for x in A[k.R_SCORES, :rules.n_sides]),
        last_domino_seat=None if G[k.F_LAST_DOM] < 0 else int(G[k.F_LAST_DOM]))
    legal = np.flatnonzero(games.legal_mask()[b])
    return dataclasses.replace(state, legal=tuple(int(a) for a in legal))


@pytest.mark.parametrize("preset,players,teams", TABLES)
@pytest.mark.parametrize("view", VIEWS)
def test_batched_engine_equals_the_scalar_rows(view: str, preset: str, players: int,
                                               teams: bool) -> None:
    """The same deals and moves in both engines (tests/test_batched_bots.py's positions)."""
    pytest.importorskip("numba")
    from test_batched_bots import _positions

    checked = 0
    for games, states, live in _positions(preset, players, teams, 600, seed=5):
        rows = games.action_features(view=view)
        for b in live:
            want = action_view_features(SeatView.of(states[b], states[b].current), view)
            assert np.array_equal(rows[b], want), (view, int(b))
            checked += 1
    assert checked >= 600


@pytest.mark.parametrize("preset,players,teams", TABLES)
@pytest.mark.parametrize("view", VIEWS)
def test_vector_env_appends_the_learners_rows(view: str, preset: str, players: int,
                                              teams: bool) -> None:
    """make_vec's obs: the batched engine's rows of each game, equal to the scalar rows of
    the seat's view; and the batched rows read nothing hidden: a game rebuilt from the seat's
    view alone (other hands and boneyard replaced) gives the same rows."""
    pytest.importorskip("numba")
    from allfives_env.batched_engine.view import games_from_view

    envs = gymnasium.make_vec("allfives/AllFives-v0", num_envs=8, preset=preset,
                              players=players, teams=teams, action_view=view,
                              opponents=["greedy", "random"])
    width = len(action_view_names(view))
    assert envs.single_observation_space.shape == (OBS_SIZE + N_ACTIONS * width,)
    rng = np.random.default_rng(1)
    obs, infos = envs.reset(seed=2)
    checked = 0
    for _ in range(25):
        assert envs.observation_space.contains(obs)
        games = envs.unwrapped.games
        rows = obs[:, OBS_SIZE:].reshape(8, N_ACTIONS, width)
        assert np.array_equal(rows, games.action_features())
        for b in range(8):
            _rows_ok(rows[b], infos["action_mask"][b].astype(np.int8), view)
            seat_view = seat_view_of(games, b)
            assert np.array_equal(rows[b], action_view_features(seat_view, view))
            assert np.array_equal(rows[b], games_from_view(seat_view).action_features(
                view=view)[0])
            checked += 1
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        obs, _, _, _, infos = envs.step(actions)
    assert checked == 200


def test_vector_env_bad_values() -> None:
    pytest.importorskip("numba")
    from allfives_env.batched_engine.games import BatchedGames
    from allfives_train.games.vector_env import AllFivesVectorEnv

    for make in (lambda: AllFivesVectorEnv(num_envs=2, action_view="fact"),
                 lambda: BatchedGames(make_rules(), 2, action_view="fact"),
                 lambda: gymnasium.make_vec("allfives/AllFives-v0", num_envs=2,
                                            action_view="fact")):
        with pytest.raises(ValueError, match="allowed values are 'raw', 'facts', 'heuristic'"):
            make()
    with pytest.raises(ValueError, match="not both"):
        AllFivesVectorEnv(num_envs=2, action_view="facts", action_features=9)


# ---------------------------------------------------------------------- known values
def _scripted(moves: list[str], hands: list[list[str]]) -> GameState:
    """A 2-seat all_fives hand with these hands, after ``moves``."""
    from allfives_env.game.engine import Deal
    from allfives_env.game.tiles import TILE_INDEX

    rules = make_rules("all_fives", players=2)
    held = [[TILE_INDEX[(int(t[0]), int(t[2]))] for t in h] for h in hands]
    rest = [t for t in range(28) if t not in held[0] + held[1]]
    g = GameState(rules, log=False, dealer=lambda k, _r: Deal(held, rest, 0))
    for m in moves:
        g.apply(str_to_action(m))
    return g


def test_facts_known_values() -> None:
    """Seat 0 leads [5,5] (10 points, the spinner), seat 1 plays [5,0]; seat 0 to act."""
    hands = [["5-5", "0-1", "5-6", "0-2", "2-3", "1-1", "4-4"],
             ["5-0", "3-3", "2-2", "0-4", "1-2", "1-3", "2-4"]]
    g = _scripted([], hands)
    lead = action_view_features(SeatView.of(g, 0), "facts")[str_to_action("5-5@lead")]
    c = FACT_COLUMN
    assert lead[c["points"]] == pytest.approx(10 / 20) and lead[c["spinner"]] == 1.0
    assert lead[c["double"]] == 1.0 and lead[c["end_lead"]] == 1.0
    assert lead[c["open_after_5"]] == pytest.approx(0.5) and lead[c["exposed_5"]] == 1.0
    assert lead[c["held_after_5"]] == pytest.approx(1 / 7)  # [5,6] is left
    assert lead[c["rest_tiles"]] == pytest.approx(0.6)
    assert lead[c["unseen_5"]] == pytest.approx(5 / 7)  # 7 fives less [5,5], [5,6]
    assert lead[c["total_mod5_0"]] == 1.0 and lead[c["total_mod5_1"]] == 0.0
    # on [5,5] alone a reply scores leaving a 0 (0 + 10) or a 5 ([5,5]: 10 + 10), no other
    assert [lead[c[f"reply_scores_{k}"]] for k in range(7)] == [1, 0, 0, 0, 0, 1, 0]
    assert lead[c["held_scoring"]] == 0.0  # [5,0] is unseen, [5,5] is the move itself
    assert lead[c["unseen_scoring"]] == pytest.approx(1 / 7)
    g = _scripted(["5-5@lead", "0-5@left"], hands)
    rows = action_view_features(SeatView.of(g, 0), "facts")
    play = rows[str_to_action("5-6@right")]  # 0 + 6: not a multiple of 5
    assert play[c["points"]] == 0.0 and play[c["open_total"]] == pytest.approx(6 / 60)
    assert play[c["opens_arms"]] == 1.0 and play[c["open_after_5"]] == pytest.approx(0.5)
    assert play[c["total_mod5_1"]] == 1.0 and play[c["total_mod5_0"]] == 0.0
    zero = rows[str_to_action("0-1@left")]  # 1 + 5 + 5 = 11
    assert zero[c["points"]] == 0.0 and zero[c["open_total"]] == pytest.approx(11 / 60)
    assert zero[c["exposed_1"]] == 1.0 and zero[c["opens_arms"]] == 0.0


def test_the_docs_example_runs_and_the_docs_list_every_column() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "environment.md").read_text()
    section = doc.split("## Action views (`action_view`)", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"<!-- action-view-example -->\n```python\n(.*?)```", section, re.S)
    scope: dict = {}
    exec(compile(code, "docs/environment.md", "exec"), scope)  # noqa: S102
    assert scope["rows"].shape == (N_ACTIONS, 62) and scope["names"] == FACT_NAMES
    assert scope["single"].observation_space.shape == (OBS_SIZE + N_ACTIONS * 62,)
    shown = [f"`{n}`" for n in FEATURES + FACT_NAMES if not n[-1].isdigit()
             and not n.startswith("end_")]
    shown += ["`end_lead` .. `end_down`"] + [f"`{n[:-2]}_0` .. `{n[:-2]}_6`"
                                             for n in FACT_NAMES if n.endswith("_6")]
    for text in shown:
        assert text in section, text


@pytest.mark.parametrize("view", VIEWS)
def test_scalar_loop_vector_env_appends_the_same_rows(view: str) -> None:
    """The VectorEnv's scalar fallback (no numba) takes the option too, with the same rows."""
    from allfives_train.games.vector_fallback import ScalarLoopVectorEnv

    envs = ScalarLoopVectorEnv(make_rules(players=3), 3, [{"agent": "greedy"}], seed=0,
                               action_view=view)
    width = len(action_view_names(view))
    obs, infos = envs.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(30):
        assert obs.shape == (3, OBS_SIZE + N_ACTIONS * width)
        for i, env in enumerate(envs.envs):
            want = action_view_features(SeatView.of(env.game, env.seat), view)
            assert np.array_equal(obs[i, OBS_SIZE:].reshape(N_ACTIONS, width), want)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        obs, _, _, _, infos = envs.step(actions)


@pytest.mark.parametrize("view", VIEWS)
def test_pettingzoo_and_gymnasium_checkers_pass_with_a_view(view: str) -> None:
    import pettingzoo.test as pzt
    from gymnasium.utils.env_checker import check_env

    pzt.api_test(allfives_env.env(players=3, action_view=view), num_cycles=30)
    check_env(gymnasium.make("allfives/AllFives-v0", action_view=view).unwrapped,
              skip_render_check=True)


def test_views_without_numba_and_without_importing_the_agents_first() -> None:
    """The scalar path needs no numba, and the AEC env finds the ``heuristic`` view through
    its entry point in a fresh process that never imported allfives_agents itself."""
    import subprocess
    import sys

    code = """
import sys
sys.modules["numba"] = None
import numpy as np, allfives_env
for view in ("facts", "heuristic"):
    env = allfives_env.env(players=2, action_view=view)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    rows = obs["action_features"]
    assert (rows.any(axis=1) == obs["action_mask"].astype(bool)).all() or view == "heuristic"
    assert not rows[obs["action_mask"] == 0].any() and rows.any()
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_raw_is_the_default_and_changes_nothing() -> None:
    env, raw = allfives_env.env(players=2), allfives_env.env(players=2, action_view="raw")
    for e in (env, raw):
        e.reset(seed=4)
        assert set(e.observe(e.agent_selection)) == {"observation", "action_mask"}
        assert set(e.observation_space("player_0").spaces) == {"observation", "action_mask"}
    assert np.array_equal(env.observe(env.agent_selection)["observation"],
                          raw.observe(raw.agent_selection)["observation"])
    assert gymnasium.make("allfives/AllFives-v0").observation_space.shape == (OBS_SIZE,)


@pytest.mark.parametrize("view", VIEWS)
def test_batched_rows_of_finished_games_are_zero(view: str) -> None:
    pytest.importorskip("numba")
    from allfives_env.batched_engine.games import BatchedGames

    games = BatchedGames(make_rules(players=2, target=10), 32, seed=0, autoreset=False,
                         action_view=view)
    games.reset()
    rng = np.random.default_rng(0)
    finished = 0
    while games.in_play.any():
        actions = np.full(32, -1)
        for b in np.flatnonzero(games.in_play):
            actions[b] = rng.choice(np.flatnonzero(games.legal_mask()[b]))
        games.step(actions)
        rows, over = games.action_features(), ~games.in_play
        assert not rows[over].any() and not rows[~games.legal_mask()].any()
        finished = int(over.sum())
    assert finished == 32
