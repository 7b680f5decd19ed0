"""The feature registry: every registered per-action feature is the same number in the scalar
version and the numba twin on thousands of random-play positions with 2, 3 and 4 seats,
computed where the registry says (its seat counts, a move that empties the hand or not) and
0 elsewhere; the sets are prefixes; the counts, the policy kinds and the messages follow from
the declarations (a table with one more feature derives one more set and its kinds); the sets
already released keep their features in their columns, as the shipped checkpoints read them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from allfives_agents.features.action_features import (
    BASE_FEATURES,
    FEATURE_COUNTS,
    FEATURE_VERSION,
    FEATURES,
    HEURISTIC_WEIGHTS,
    N_FEATURES,
    REGISTRY,
    action_features,
)
from allfives_agents.features.registry import Feature, Registry
from allfives_agents.trained.policy_numpy import HEAD_KINDS, KIND_FEATURES, NumpyPolicy
from allfives_env.game.tiles import N_ACTIONS, N_ENDS
from allfives_env.game.view import SeatView

ROOT = Path(__file__).resolve().parent.parent
# the sets already released, as policy.npz files name them: they never change
RELEASED = {1: ("points", "reply", "no_reply", "pips", "double", "variety", "keep", "out",
                "win"),
            2: ("counter",), 3: ("ply3", "can_next"), 4: ("other_match",), 5: ("draw_reply",),
            6: ("out_pips", "opp_out", "my_match")}
CONFIGS = [("all_fives", 2, False), ("five_up", 2, False), ("all_fives", 3, False),
           ("five_up", 3, False), ("all_fives", 4, True), ("muggins", 4, True),
           ("pagat", 4, False)]
DECISIONS = 1200  # per configuration


@dataclass
class Sample:
    """The features of every decision of random-play games in one configuration: both
    versions, which rows are legal, which legal moves empty the hand, the positions."""

    players: int
    scalar: np.ndarray  # [n, 140, N]
    batched: np.ndarray  # [n, 140, N]
    legal: np.ndarray  # [n, 140] bool
    goes_out: np.ndarray  # [n, 140] bool: legal, and it empties the hand
    views: list[SeatView]


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    pytest.importorskip("numba")
    from test_batched_bots import _positions

    from allfives_agents.batched.features import batched_features

    out = []
    for preset, players, teams in CONFIGS:
        scalar, batched, views = [], [], []
        for games, states, live in _positions(preset, players, teams, DECISIONS, seed=17):
            batched.append(batched_features(games, live))
            for b in live:
                view = SeatView.of(states[b], states[b].current)
                views.append(view)
                scalar.append(action_features(view))
        legal = np.zeros((len(views), N_ACTIONS), bool)
        goes_out = np.zeros_like(legal)
        for i, view in enumerate(views):
            legal[i, list(view.legal)] = True
            for a in view.legal:
                goes_out[i, a] = not view.hand & ~(1 << (a // N_ENDS))
        out.append(Sample(players, np.array(scalar), np.concatenate(batched), legal, goes_out,
                          views))
    return out


@pytest.mark.parametrize("name", FEATURES)
def test_every_feature_is_the_same_in_both_versions_and_only_where_declared(
        name: str, samples: list[Sample]) -> None:
    """Scalar == batched in this feature's column (exactly); 0 on illegal moves, with seat
    counts it does not apply to, and on moves that empty the hand unless ``when_out``; and
    not always 0 where it applies (so each version really computes it)."""
    feature, col = REGISTRY.features[REGISTRY.column[name]], REGISTRY.column[name]
    nonzero = 0
    for s in samples:
        got, want = s.batched[..., col], s.scalar[..., col]
        bad = np.argwhere(got != want)
        assert not len(bad), (name, s.players, bad[:3])
        assert not want[~s.legal].any(), (name, s.players)
        if s.players not in feature.seats:
            assert not want.any(), (name, s.players, "declared for seats", feature.seats)
            continue
        if not feature.when_out:
            assert not want[s.goes_out].any(), (name, s.players, "not computed going out")
        nonzero += int((want != 0).sum())
    assert nonzero >= 5, (name, nonzero)


def test_the_sets_are_prefixes(samples: list[Sample]) -> None:
    """Asking for the first k (each count of a set) gives those columns unchanged, in both
    versions."""
    pytest.importorskip("numba")
    from test_batched_bots import _positions

    from allfives_agents.batched.features import batched_features

    for s in samples:
        for view, every in list(zip(s.views, s.scalar))[:150]:
            for k in FEATURE_COUNTS:
                assert np.array_equal(action_features(view, k), every[:, :k]), k
    for preset, players, teams in CONFIGS[::2]:
        for games, _states, live in _positions(preset, players, teams, 200, seed=2):
            every = batched_features(games, live)
            for k in FEATURE_COUNTS:
                assert np.array_equal(batched_features(games, live, k=k), every[..., :k]), k


def test_counts_and_kinds_follow_from_the_declarations() -> None:
    assert FEATURES == tuple(f.name for f in REGISTRY.features) and N_FEATURES == len(REGISTRY)
    assert FEATURE_COUNTS == tuple(sum(f.version <= v for f in REGISTRY.features)
                                   for v in range(1, REGISTRY.latest + 1))
    assert BASE_FEATURES == FEATURE_COUNTS[0]
    assert FEATURE_VERSION == f"action_features/{len(FEATURE_COUNTS)}"
    assert KIND_FEATURES == {f"action_features{head}/{v}": n
                             for v, n in enumerate(FEATURE_COUNTS, 1) for head in ("", "_head")}
    assert set(HEAD_KINDS) == {k for k in KIND_FEATURES if "_head/" in k}
    assert HEURISTIC_WEIGHTS.shape == (N_FEATURES,)
    lines = REGISTRY.describe().splitlines()
    assert [line.split()[1] for line in lines] == list(FEATURES)
    assert all(f"/{f.version} " in line for f, line in zip(REGISTRY.features, lines))


def test_the_released_sets_keep_their_columns() -> None:
    """Sets 1-6 are what released checkpoints read: a new feature only appends."""
    names: tuple[str, ...] = ()
    for v, added in RELEASED.items():
        names += added
        assert REGISTRY.count(v) == len(names) and FEATURES[:len(names)] == names, v


def test_every_shipped_checkpoint_reads_a_set_as_its_card_names_it() -> None:
    seen = 0
    for card_path in sorted(ROOT.glob("checkpoints/*/card.json")):
        policy = json.loads(card_path.read_text()).get("policy", {})
        if "kind" not in policy:
            continue
        k = KIND_FEATURES[policy["kind"]]
        assert policy["features"] == list(FEATURES[:k]), card_path
        npz = NumpyPolicy.load(card_path.parent / "policy.npz")
        assert npz.n_features == k  # type: ignore[attr-defined]
        assert str(npz.arrays()["kind"]) == policy["kind"]
        seen += 1
    assert seen >= 1


def test_a_count_that_is_no_sets_is_refused_with_the_counts() -> None:
    pytest.importorskip("numba")
    from test_batched_bots import _positions

    from allfives_agents.batched.features import batched_features

    games, states, live = next(_positions("all_fives", 2, False, 10, seed=1))
    view = SeatView.of(states[0], states[0].current)
    allowed = REGISTRY.counts_text()
    assert allowed == ", ".join(map(str, FEATURE_COUNTS))
    for bad in sorted(set(range(1, N_FEATURES + 3)) - set(FEATURE_COUNTS)):
        with pytest.raises(ValueError, match=f"{bad} asked; a policy reads the first {allowed} "
                                             "of points, reply"):
            action_features(view, bad)
        with pytest.raises(ValueError, match=f"reads the first {allowed} of"):
            batched_features(games, live, k=bad)


def _toy(*extra: Feature[object]) -> Registry[object]:
    """The project's table with ``extra`` appended."""
    return Registry((*REGISTRY.features, *extra))  # type: ignore[arg-type]


def test_one_more_feature_derives_one_more_set_and_its_kinds() -> None:
    """Appending a feature of the next version (here to a copy of the table) adds its column,
    a set one longer, its two policy kinds, and its count to the messages."""
    v = REGISTRY.latest + 1
    toy = _toy(Feature("dummy", v, "a constant", lambda m: 1.0, seats=(2,)))
    assert toy.names == (*FEATURES, "dummy") and toy.column["dummy"] == N_FEATURES
    assert toy.counts == (*FEATURE_COUNTS, N_FEATURES + 1)
    assert toy.kinds()[f"action_features/{v}"] == N_FEATURES + 1
    assert toy.kinds()[f"action_features_head/{v}"] == N_FEATURES + 1
    assert str(N_FEATURES + 1) in str(toy.count_error(N_FEATURES + 2))
    assert toy.live(N_FEATURES + 1, 2)[-1] and not toy.live(N_FEATURES + 1, 3)[-1]
    assert not toy.live(N_FEATURES + 1, 2, out=True)[-1]  # not when_out
    assert toy.priors({k: 1.0 for k in ("reply", "block", "pips", "double", "variety",
                                        "keep")})[-1] == 0.0


@pytest.mark.parametrize("extra,message", [
    (Feature("reply", 7, "again", lambda m: 0.0), "reply declared twice"),
    (Feature("late", REGISTRY.latest + 2, "a skipped version", lambda m: 0.0),
     "versions run 1, 2"),
    (Feature("back", 1, "an old version after a newer one", lambda m: 0.0),
     "versions run 1, 2"),
    (Feature("nowhere", 7, "no seats", lambda m: 0.0, seats=()), "seats"),
    (Feature("five", 7, "five seats", lambda m: 0.0, seats=(5,)), "seats"),
    (Feature("not a name", 7, "a space", lambda m: 0.0), "not an identifier"),
])
def test_a_table_that_breaks_the_rules_is_refused(extra: Feature[object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _toy(extra)
