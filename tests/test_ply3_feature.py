"""The ``ply3`` and ``can_next`` features (``features: 12``, 2 seats): with the boneyard empty
the next seat's hand is known, and both equal what the engine itself gives when the next
seat plays its best-scoring reply and the mover its best-scoring follow-up; with more
seats they are 0; a 12-feature run trains, saves as ``action_features/3`` and plays."""

from __future__ import annotations

import numpy as np
import pytest

from allfives_agents.features.action_features import (
    FEATURE_COUNTS,
    FEATURES,
    FeatureContext,
    action_features,
    plies,
)
from allfives_env.game.engine import GameState
from allfives_env.game.layout import layout_after
from allfives_env.game.observation import OBS_SIZE, observe
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ACTIONS, N_ENDS
from allfives_env.game.view import SeatView


def _best(state: GameState) -> int | None:
    """The seat to act's best-scoring legal play (lowest tile, then highest end, on a tie),
    or None when it has none."""
    legal = state.legal_actions()
    if not legal:
        return None
    return max(legal, key=lambda a: (state.points_if(a), -(a // N_ENDS), a % N_ENDS))


def _by_the_engine(state: GameState, action: int) -> tuple[float, float] | None:
    """(the next seat's best score after its best reply and the mover's best follow-up,
    whether the mover had a follow-up), played out on a copy of ``state``; None when the
    hand ends before the follow-up (the features, as ``counter``, play on past it)."""
    s, mover = state.copy(), state.current
    s.apply(action)
    if s.hand_over:  # blocked: no seat can play
        return None
    if s.current != mover:  # the next seat replies (with the boneyard empty, or it passes)
        s.apply(_best(s))  # type: ignore[arg-type]
        if s.hand_over:
            return None
    if s.current != mover:  # the mover passes: the next seat scores its best now
        a = _best(s)
        return (float(s.points_if(a)) if a is not None else 0.0), 0.0
    s.apply(_best(s))  # type: ignore[arg-type]
    if s.hand_over:
        return 0.0, 1.0
    a = _best(s) if s.current != mover else None
    return (float(s.points_if(a)) if a is not None else 0.0), 1.0


def _endgames(players: int, want: int) -> list[GameState]:
    """Positions of random games where the boneyard can give no more, far from the target."""
    rules, rng, out = make_rules("all_fives", players=players), np.random.default_rng(4), []
    while len(out) < want:
        state = GameState(rules, seed=int(rng.integers(1 << 30)), log=False)
        while not state.game_over and len(out) < want:
            if state.hand_over:
                state.next_hand()
                continue
            if state.bone_end == state.bone_pos and max(state.scores) < rules.target - 80:
                out.append(state.copy())
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    return out


def test_with_the_boneyard_empty_ply3_and_can_next_are_the_engines_play() -> None:
    checked = 0
    for state in _endgames(2, 400):
        view = SeatView.of(state, state.current)
        ctx = FeatureContext(view)
        assert ctx.q == 1.0 or not ctx.allowed
        for a in view.legal:
            rest = view.hand & ~(1 << (a // N_ENDS))
            if not rest:
                continue
            want = _by_the_engine(state, a)
            if want is None:
                continue
            got = plies(ctx, layout_after(view, a, view.rules.spinner), rest)[1:]
            assert got == pytest.approx(want, abs=1e-9)
            checked += 1
    assert checked > 300


@pytest.mark.parametrize("players", [3, 4])
def test_with_more_seats_they_are_zero(players: int) -> None:
    for state in _endgames(players, 50):
        f = action_features(SeatView.of(state, state.current))
        assert not f[:, FEATURES.index("ply3"):FEATURES.index("other_match")].any()


def test_the_feature_sets() -> None:
    """Set 3 adds ply3 and can_next to set 2; a count between the two is refused."""
    assert FEATURES[FEATURE_COUNTS[1]:FEATURE_COUNTS[2]] == ("ply3", "can_next")
    [state] = _endgames(2, 1)
    view = SeatView.of(state, state.current)
    for k in FEATURE_COUNTS:
        assert action_features(view, k).shape[-1] == k
    allowed = ", ".join(map(str, FEATURE_COUNTS))
    with pytest.raises(ValueError, match=f"reads the first {allowed} of points"):
        action_features(view, FEATURE_COUNTS[1] + 1)


def check_a_wider_run(tmp_path, small: int, big: int, kind: str) -> None:
    """A ``big``-feature run trains, saves as ``kind`` and plays; a ``small``-feature
    checkpoint widened to ``big`` plays as it did (the new weights at 0)."""
    pytest.importorskip("torch")
    pytest.importorskip("numba")
    from test_counter_feature import DMC
    from test_residual_policy import TINY

    from allfives.cli import main
    from allfives_agents.base import make_agent
    from allfives_agents.trained.policy_numpy import NumpyPolicy
    from allfives_env.game.match import play_game
    from allfives_train.algorithms.ppo_batched.net import make_net
    from allfives_train.config import load_config

    runs = {k: tmp_path / f"run{k}" for k in (small, big)}
    for k, run in runs.items():
        assert main(["train", "--run-dir", str(run), *TINY, "--total-steps", "128",
                     "--features", str(k)]) == 0
    policy = NumpyPolicy.load(runs[big] / "final" / "policy.npz")
    assert policy.n_features == big  # type: ignore[attr-defined]
    assert str(policy.arrays()["kind"]) == kind
    agent = make_agent(f"ckpt:{runs[big] / 'final'}", seed=0)
    assert play_game(make_rules("all_fives", players=2), [agent, make_agent("heuristic")],
                     seed=3, log=False).game_over
    widened = make_net(load_config(DMC, {"init_from": str(runs[small] / "final"),
                                         "features": big}))
    x, start = [], NumpyPolicy.load(runs[small] / "final" / "policy.npz")
    for state in _endgames(2, 40):
        view = SeatView.of(state, state.current)
        x.append(np.concatenate([observe(state, state.current, list(view.legal)),
                                 action_features(view, big).ravel()]))
    f = np.array(x, np.float32)
    few = np.concatenate([f[:, :OBS_SIZE], f[:, OBS_SIZE:].reshape(len(f), N_ACTIONS, big)[
        ..., :small].reshape(len(f), -1)], axis=1)
    np.testing.assert_allclose(widened.numpy_policy().logits(f), start.logits(few),
                               rtol=1e-5, atol=1e-5)


def test_a_twelve_feature_run_widens_trains_saves_and_plays(tmp_path) -> None:
    check_a_wider_run(tmp_path, 10, 12, "action_features/3")
