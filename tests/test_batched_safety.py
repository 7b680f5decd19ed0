"""``BatchedGames`` is memory-safe: whatever reaches a public method is checked before the numba
kernels see it. Bad input gets one ``ValueError`` line and leaves every game as it was; a good
step leaves every game consistent (``check()``).

The reported crashes are reproduced one by one (action 140 overwrote an engine table entry,
``2**40`` and a ``uint8`` 200 ended the process, a masked-out action put a tile into a hand, NaN
was skipped, 5.7 and ``"1"`` were played), then hypothesis throws arbitrary arrays at ``step``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from allfives_agents.batched.bots import BatchedRandom  # noqa: E402
from allfives_env.batched_engine.games import BatchedGames  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.tiles import N_ACTIONS  # noqa: E402

STATE = ("G", "A", "T", "rng", "master", "EV", "EVP", "DEV", "DEVP")
DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "bool", "object", "str")
SPECIAL = [-1, 0, 1, 4, 5, 139, 140, 141, 199, 200, 255, 256, -2, -128, 127, 2**31 - 1,
           2**31, 2**32, 2**40, 2**63 - 1, -2**63, 2**64 - 1]


def _games(batch: int = 4, seed: int = 0, **kw: Any) -> BatchedGames:
    games = BatchedGames(make_rules(kw.pop("preset", "all_fives"), **kw), batch, seed=seed)
    games.reset()
    return games


def _state(games: BatchedGames) -> dict[str, np.ndarray]:
    return {name: getattr(games, name).copy() for name in STATE}


def _assert_unchanged(games: BatchedGames, before: dict[str, np.ndarray]) -> None:
    for name in STATE:
        assert np.array_equal(getattr(games, name), before[name]), f"{name} changed"


def _legal(games: BatchedGames) -> np.ndarray:
    """One legal action per game (the lowest), from a fresh mask."""
    return games.legal_mask().copy().argmax(axis=1).astype(np.int64)


def _refused(games: BatchedGames, actions: Any, match: str) -> None:
    """``step(actions)`` raises one ValueError line matching ``match`` and changes nothing."""
    before = _state(games)
    with pytest.raises(ValueError, match=match) as info:
        games.step(actions)
    assert "\n" not in str(info.value)
    _assert_unchanged(games, before)
    games.check()


# ------------------------------------------------------------------ the reported crashes
@pytest.mark.parametrize("value", [140, 2**40, -2, 10**6])
def test_out_of_range_actions_are_refused(value: int) -> None:
    games = _games()
    actions = _legal(games)
    actions[1] = value
    _refused(games, actions, f"game 1: action {value} is out of range")


def test_uint8_200_is_refused() -> None:
    games = _games()
    actions = _legal(games).astype(np.uint8)
    actions[0] = 200
    _refused(games, actions, "game 0: action 200 is out of range")


def test_masked_out_action_is_refused() -> None:
    games = _games()
    actions = _legal(games)
    hand = games.A[2, games.k.R_HANDS, games.current[2]]
    size = bin(int(hand)).count("1")
    actions[2] = int(np.flatnonzero(~games.legal_mask()[2])[0])
    _refused(games, actions, "game 2: action .* is not legal; legal: ")
    assert bin(int(games.A[2, games.k.R_HANDS, games.current[2]])).count("1") == size


@pytest.mark.parametrize("bad,what", [
    (np.nan, "dtype float64"), (np.inf, "dtype float64"), (5.7, "dtype float64"),
    (5.0, "dtype float64"), ("1", "dtype <U"), (True, "dtype object"), (None, "dtype object"),
])
def test_non_integer_actions_are_refused(bad: Any, what: str) -> None:
    games = _games()
    actions: list[Any] = _legal(games).tolist()
    actions[0] = bad
    _refused(games, actions, f"actions must be an integer array of shape \\(4,\\).*{what}")


@pytest.mark.parametrize("actions", [
    np.full(4, np.nan), np.full(4, 5.7, np.float32), np.array(["1"] * 4), np.ones(4, bool),
    np.array([1, "1", 2.5, None], dtype=object), [[0], [1], [2], [3]], [0, 1, 2], 7, "0000",
    [[0, 1], [2]],
])
def test_bad_arrays_are_refused(actions: Any) -> None:
    _refused(_games(), actions, "actions must be an integer array|one action per game")


def test_an_action_for_a_finished_game_is_refused() -> None:
    games = BatchedGames(make_rules("five_up", target=20), 4, seed=2, autoreset=False)
    games.reset()
    bot = BatchedRandom(2)
    while games.in_play.all():
        games.step(bot.act(games, np.arange(4)))
    over = int(np.flatnonzero(~games.in_play)[0])
    actions = np.full(4, -1)
    actions[over] = 0
    _refused(games, actions, f"game {over}: action 0, but game {over} has no hand in play")
    assert (games.random_actions(np.arange(4), np.zeros(4, np.uint64))[~games.in_play]
            == -1).all()


def test_a_changed_mask_buffer_does_not_open_illegal_moves() -> None:
    games = _games()
    actions = _legal(games)
    games.legal_mask()[:] = True  # the handed-out buffer: the check keeps its own
    games.observe_and_mask()[1][:] = True
    actions[3] = int(np.flatnonzero(~games.legal_mask()[3])[0])
    games.legal_mask()[:] = True
    _refused(games, actions, "game 3: action .* is not legal")


# ------------------------------------------------------------------ other methods
@pytest.mark.parametrize("call,match", [
    (lambda g: g.reset_games([4]), "game 4 is out of range 0..3"),
    (lambda g: g.reset_games([-1]), "game -1 is out of range"),
    (lambda g: g.reset_games([1.0]), "games must be a 1-d integer array"),
    (lambda g: g.reset_games(np.array([[0]])), "games must be a 1-d integer array"),
    (lambda g: g.observe_seat(np.array([7, 0, 0, 0])), "seat 7 is out of range 0..1"),
    (lambda g: g.observe_seat(np.array([0, 0]), games=[0, 1, 2]), "one seat per game"),
    (lambda g: g.observe_seat(np.zeros(1, int), games=[2**40]), "game 1099511627776 is out"),
    (lambda g: g.observe_and_mask(games=[9]), "game 9 is out of range"),
    (lambda g: g.observe_and_mask(out=np.empty((3, 386), np.float32)), "shape \\(4, 386\\)"),
    (lambda g: g.observe(out=np.empty((4, 386))), "writable float32 array"),
    (lambda g: g.legal_mask(out=np.empty((4, 140), np.int8)), "writable bool array"),
    (lambda g: g.random_actions([0], np.zeros(2, np.uint64)), "uint64 array of shape \\(4,\\)"),
    (lambda g: g.random_actions([0], np.zeros(4, np.int64)), "uint64 array of shape \\(4,\\)"),
    (lambda g: g.random_actions([5], np.zeros(4, np.uint64)), "game 5 is out of range"),
    (lambda g: g.needs_random_leader(-1), "game -1 is not a slot 0..3"),
    (lambda g: g.check([0, 0, 0, 140]), "game 3: action 140 is out of range"),
])
def test_other_methods_check_indices_and_buffers(call: Any, match: str) -> None:
    games = _games()
    before = _state(games)
    with pytest.raises(ValueError, match=match):
        call(games)
    _assert_unchanged(games, before)


def test_read_only_output_is_refused() -> None:
    games = _games()
    out = np.empty((4, N_ACTIONS), bool)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="writable bool array"):
        games.legal_mask(out=out)


def test_a_dealer_leader_must_be_a_seat() -> None:
    from allfives_env.batched_engine.games import array_dealer

    rules = make_rules("all_fives")
    orders = np.array([[np.random.default_rng(b).permutation(28)] for b in range(2)])
    games = BatchedGames(rules, 2, autoreset=False,
                         dealer=array_dealer(rules, orders, np.full((2, 1), 9)))
    with pytest.raises(ValueError, match="game 0: the deal's leader 9 is not a seat 0..1"):
        games.reset()


@pytest.mark.parametrize("value,dtype", [(140, np.int64), (2**40, np.int64), (-2, np.int64),
                                         (200, np.uint8), (5.7, np.float64)])
def test_step_unchecked_still_refuses_what_is_out_of_range(value: Any, dtype: Any) -> None:
    games = _games()
    actions = _legal(games).astype(dtype)
    actions[0] = value
    before = _state(games)
    with pytest.raises(ValueError, match="step_unchecked\\(\\): "):
        games.step_unchecked(actions)
    _assert_unchanged(games, before)


# ------------------------------------------------------------------ check() itself
def test_check_passes_over_long_random_play() -> None:
    for preset, players, teams in (("all_fives", 2, False), ("five_up", 3, False),
                                   ("muggins", 4, True), ("pagat", 4, False)):
        games = _games(32, 1, preset=preset, players=players, teams=teams)
        bot = BatchedRandom(1)
        for _ in range(300):
            games.step(bot.act(games, np.arange(32)))
            games.check()


def test_check_finds_a_tile_put_into_a_hand() -> None:
    """The old failure: an unchecked masked-out action XORs a tile into the hand."""
    games = _games()
    actions = _legal(games)
    actions[1] = int(np.flatnonzero(~games.legal_mask()[1])[0])
    games.step_unchecked(actions)  # in range, so memory-safe, but not legal
    with pytest.raises(ValueError, match="game 1: the state is inconsistent: "):
        games.check()


@pytest.mark.parametrize("field,value,match", [
    ("score", 3, "a score is not a multiple of 5"),
    ("score", -5, "a score is below 0"),
    ("cur", 5, "the seat to act is not a seat"),
    ("bone_pos", 3, "the boneyard's bounds are off"),
])
def test_check_finds_broken_fields(field: str, value: int, match: str) -> None:
    games = _games(preset="five_up")  # the winner collects: scores never go below 0
    k = games.k
    if field == "score":
        games.A[2, k.R_SCORES, 0] = value
    elif field == "cur":
        games.G[2, k.F_CUR] = value
    else:
        games.G[2, k.F_BONE_POS] = value
    with pytest.raises(ValueError, match=f"game 2: the state is inconsistent: {match}"):
        games.check()


# ------------------------------------------------------------------ the property
def _oracle(actions: Any, mask: np.ndarray) -> bool:
    """Whether ``actions`` is a valid step, decided without the engine's checker: an integer
    (not bool) array of shape (B,) whose entries are -1 or legal under ``mask``."""
    try:
        arr = np.asarray(actions)
    except (TypeError, ValueError):
        return False
    if arr.dtype.kind not in "iu" or arr.shape != (len(mask),):
        return False
    if isinstance(actions, list) and any(isinstance(a, (bool, np.bool_)) for a in actions):
        return False
    return all(a == -1 or (0 <= a < N_ACTIONS and bool(mask[b, a]))
               for b, a in enumerate(int(x) for x in arr.tolist()))


def _value(dtype: str) -> st.SearchStrategy[Any]:
    nums = st.one_of(st.sampled_from(SPECIAL), st.integers(-2**64, 2**65),
                     st.integers(-1, N_ACTIONS))
    if dtype in ("float16", "float32", "float64"):
        return st.one_of(nums.map(float), st.floats(allow_nan=True, allow_infinity=True))
    if dtype == "bool":
        return st.booleans()
    if dtype in ("object", "str"):
        return st.one_of(nums, st.text(max_size=3), st.none(), st.floats())
    lo, hi = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    return st.one_of(st.sampled_from([v for v in SPECIAL if lo <= v <= hi]),
                     st.integers(lo, hi), st.integers(max(lo, -1), N_ACTIONS))


@st.composite
def _actions(draw: st.DrawFn, games: BatchedGames) -> Any:
    """Legal actions, legal ones with a few entries replaced, or any array at all."""
    b, mask = games.batch, games.legal_mask().copy()
    kind = draw(st.sampled_from(["legal", "legal", "mutated", "mutated", "any"]))
    dtype = draw(st.sampled_from(DTYPES))
    legal = [int(draw(st.sampled_from(np.flatnonzero(row).tolist()))) if row.any() else -1
             for row in mask]
    if kind == "legal":
        skip = draw(st.lists(st.booleans(), min_size=b, max_size=b))
        chosen = [-1 if s else a for a, s in zip(legal, skip)]
        widths = ["int16", "int32", "int64"] + (["uint8", "uint64"] if min(chosen) >= 0 else [])
        return np.array(chosen, dtype=draw(st.sampled_from(widths)))
    if kind == "mutated":
        values: list[Any] = list(legal)
        for _ in range(draw(st.integers(1, 2))):
            j = draw(st.integers(0, b - 1))
            masked_out = np.flatnonzero(~mask[j]).tolist()
            values[j] = draw(st.one_of(_value(dtype), st.sampled_from(masked_out)))
        return _to_array(values, dtype)
    shape = draw(st.sampled_from([(b,), (b,), (b - 1,), (b + 1,), (), (b, 1), (1, b)]))
    n = int(np.prod(shape))
    values = draw(st.lists(_value(dtype), min_size=n, max_size=n))
    arr = _to_array(values, dtype)
    return arr.reshape(shape) if isinstance(arr, np.ndarray) and arr.size == n else arr


def _to_array(values: list[Any], dtype: str) -> Any:
    """``values`` as an array of ``dtype`` where numpy can hold them, else as the list."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.array(values, dtype=dtype)
    except (OverflowError, ValueError, TypeError):
        return values


@settings(deadline=None)
@given(st.data(), st.sampled_from([("all_fives", 2), ("five_up", 3), ("muggins", 4)]),
       st.integers(1, 5), st.booleans(), st.integers(0, 2**32))
def test_arbitrary_arrays_never_break_the_engine(data: st.DataObject, preset: tuple[str, int],
                                                 batch: int, autoreset: bool, seed: int) -> None:
    games = BatchedGames(make_rules(preset[0], players=preset[1], target=60), batch, seed=seed,
                         autoreset=autoreset)
    games.reset()
    for _ in range(25):
        mask = games.legal_mask().copy()
        actions = data.draw(_actions(games))
        valid = _oracle(actions, mask)
        before = _state(games)
        event("a valid step" if valid else "an invalid step")
        try:
            result = games.step(actions)
        except ValueError as exc:
            assert not valid, f"a valid step was refused: {exc}"
            assert "\n" not in str(exc)
            _assert_unchanged(games, before)
        else:
            assert valid, f"an invalid step was played: {actions!r}"
            played = np.asarray(actions).astype(np.int64) >= 0
            assert np.array_equal(result.acted, played)
        games.check()
        if not autoreset and not games.in_play.any():
            games.reset_games(np.arange(batch))
