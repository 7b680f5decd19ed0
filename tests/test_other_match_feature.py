"""The ``other_match`` feature (``features: 13``): how many tiles the next seat can be expected
to hold that answer the move. With the boneyard empty in 2 seats the next seat's hand is
known, and it is minus the number of tiles the engine lets that seat play next / 7; a
13-feature run trains, saves as ``action_features/4`` and plays; widening a 12-feature
checkpoint keeps its play."""

from __future__ import annotations

import numpy as np
import pytest
from test_ply3_feature import _endgames

from agents.action_features import FEATURES, action_features
from allfives_env.observation import OBS_SIZE, observe
from allfives_env.rules import make_rules
from allfives_env.tiles import N_ACTIONS, N_ENDS
from allfives_env.view import SeatView

COL = FEATURES.index("other_match")


def _answers(state, action: int) -> int | None:
    """How many tiles of the next seat's hand it may play after ``action``, by the engine;
    None when the move ends the hand."""
    s, mover = state.copy(), state.current
    s.apply(action)
    if s.hand_over:
        return None
    if s.current == mover:  # with the boneyard empty the next seat passed: none answer
        return 0
    return len({a // N_ENDS for a in s.legal_actions()})


def test_with_the_boneyard_empty_it_counts_the_next_seats_answers() -> None:
    checked = nonzero = 0
    for state in _endgames(2, 300):
        view = SeatView.of(state, state.current)
        f = action_features(view)
        for a in view.legal:
            want = _answers(state, a)
            if want is None or not view.hand & ~(1 << (a // N_ENDS)):
                continue
            assert f[a, COL] == pytest.approx(-want / 7.0, abs=1e-6)
            checked += 1
            nonzero += want > 0
    assert checked > 300 and nonzero > 100


@pytest.mark.parametrize("players,teams", [(3, False), (4, True)])
def test_with_more_seats_it_is_signed_by_the_next_seats_side(players: int, teams: bool) -> None:
    """The next seat is an opponent here, so the feature is at most 0, and some moves have
    an answer."""
    rules = make_rules("all_fives", players=players, teams=teams)
    from allfives_env.engine import GameState

    values = []
    for seed in range(20):
        state = GameState(rules, seed=seed, log=False)
        for _ in range(4):
            view = SeatView.of(state, state.current)
            values.append(action_features(view)[list(view.legal), COL])
            state.apply(view.legal[0])
            if state.hand_over:
                break
    v = np.concatenate(values)
    assert (v <= 0).all() and (v < 0).any()


def test_a_thirteen_feature_run_trains_saves_plays_and_widens(tmp_path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("numba")
    from test_counter_feature import DMC
    from test_residual_policy import TINY

    from agents.base import make_agent
    from agents.policy_numpy import NumpyPolicy
    from allfives_env.cli import main
    from allfives_env.match import play_game
    from train.config import load_config
    from train.fastppo import make_net

    twelve = tmp_path / "run12"
    assert main(["train", "--run-dir", str(twelve), *TINY, "--total-steps", "128",
                 "--features", "12"]) == 0
    run = tmp_path / "run13"
    assert main(["train", "--run-dir", str(run), *TINY, "--total-steps", "128",
                 "--features", "13"]) == 0
    policy = NumpyPolicy.load(run / "final" / "policy.npz")
    assert str(policy.arrays()["kind"]) == "action_features/4"
    agent = make_agent(f"ckpt:{run / 'final'}", seed=0)
    assert play_game(make_rules("all_fives", players=2), [agent, make_agent("heuristic")],
                     seed=3, log=False).game_over
    widened = make_net(load_config(DMC, {"init_from": str(twelve / "final"), "features": 13}))
    start = NumpyPolicy.load(twelve / "final" / "policy.npz")
    x = []
    for state in _endgames(2, 40):
        view = SeatView.of(state, state.current)
        x.append(np.concatenate([observe(state, state.current, list(view.legal)),
                                 action_features(view).ravel()]))
    f = np.array(x, np.float32)
    f12 = np.concatenate([f[:, :OBS_SIZE], f[:, OBS_SIZE:].reshape(len(f), N_ACTIONS, 13)[
        ..., :12].reshape(len(f), -1)], axis=1)
    np.testing.assert_allclose(widened.numpy_policy().logits(f), start.logits(f12),
                               rtol=1e-5, atol=1e-5)
