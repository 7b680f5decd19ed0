"""``BatchedGames``: batch sizes, seeding, autoreset, result shapes, action checks."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from allfives_agents.batched.bots import BatchedRandom  # noqa: E402
from allfives_env.batched_engine.games import MAX_BATCH, BatchedGames  # noqa: E402
from allfives_env.game.observation import OBS_SIZE  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402


def _run(rules, batch: int, seed: int, steps: int) -> list[np.ndarray]:
    games = BatchedGames(rules, batch, seed=seed)
    games.reset()
    bot, idx, seen = BatchedRandom(seed), np.arange(batch), []
    for _ in range(steps):
        obs, mask = games.observe_and_mask()
        seen.append(obs.copy())
        actions = bot.act(games, idx)
        assert mask[idx, actions].all()
        games.step(actions)
    return seen


@pytest.mark.parametrize("batch", [1, 7, MAX_BATCH])
def test_batch_sizes(batch: int) -> None:
    games = BatchedGames(make_rules(players=3), batch, seed=0)
    games.reset()
    obs, mask = games.observe_and_mask()
    assert obs.shape == (batch, OBS_SIZE) and obs.dtype == np.float32
    assert mask.shape == (batch, 140) and mask.any(axis=1).all()
    result = games.step(BatchedRandom(0).act(games, np.arange(batch)))
    assert result.deltas.shape == (batch, 3) and result.acted.all()
    for name in ("hand_over", "game_over", "truncated", "winners", "points"):
        assert getattr(result, name).shape == (batch,)


def test_same_seed_same_games_and_autoreset() -> None:
    rules = make_rules("muggins", players=4)
    a, b = _run(rules, 16, 3, 400), _run(rules, 16, 3, 400)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    c = _run(rules, 16, 4, 400)
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_games_end_and_restart() -> None:
    games = BatchedGames(make_rules("five_up", target=30), 64, seed=1)
    games.reset()
    bot, idx, ended = BatchedRandom(1), np.arange(64), 0
    for _ in range(300):
        result = games.step(bot.act(games, idx))
        ended += int(result.game_over.sum())
        won = result.game_over & ~result.truncated
        assert (result.final_scores[won].max(axis=1) >= 30).all()
        assert (result.winners[won] >= 0).all()
        assert games.in_play.all()
    assert ended > 64


def test_without_autoreset_games_stay_over() -> None:
    games = BatchedGames(make_rules("five_up", target=20), 8, seed=2, autoreset=False)
    games.reset()
    bot = BatchedRandom(2)
    for _ in range(500):
        live = np.flatnonzero(games.in_play)
        if not len(live):
            break
        actions = np.full(8, -1)
        actions[live] = bot.act(games, live)
        games.step(actions)
    assert not games.in_play.any()
    assert not games.legal_mask().any()
    games.reset_games(np.array([3]))
    assert games.in_play.sum() == 1 and games.in_play[3]


def test_check_names_the_illegal_game() -> None:
    games = BatchedGames(make_rules(), 4, seed=0)
    games.reset()
    actions = games.legal_mask().argmax(axis=1)
    games.check(actions)
    actions[2] = int(np.flatnonzero(~games.legal_mask()[2])[0])
    with pytest.raises(ValueError, match="game 2"):
        games.check(actions)
    with pytest.raises(ValueError, match="one action per game"):
        games.step(np.zeros(3, dtype=int))


def test_array_dealer_deals_the_given_tiles() -> None:
    from allfives_env.batched_engine.games import array_dealer

    rules = make_rules("all_fives", max_hands=3)
    rng = np.random.default_rng(0)
    orders = np.array([[rng.permutation(28) for _ in range(3)] for _ in range(4)])
    leaders = np.ones((4, 3), dtype=int)
    games = BatchedGames(rules, 4, autoreset=False, log=True,
                         dealer=array_dealer(rules, orders, leaders))
    games.reset()
    assert (games.current == 1).all()  # all_fives: the first leader is drawn, here given
    result = games.step(games.random_actions(np.arange(4), np.arange(4, dtype=np.uint64)))
    assert result.acted.all()
    first: dict[int, dict] = {}
    while games.in_play.any():
        live = np.flatnonzero(games.in_play)
        actions = np.full(4, -1)
        actions[live] = games.random_actions(live, np.arange(4, dtype=np.uint64))
        result = games.step(actions)
        for b in np.flatnonzero(result.hand_over):
            first.setdefault(int(b), games.finished_hand(int(b)))
    for b, hand in first.items():  # each game's first hand: the tiles of orders[b, 0]
        assert hand["leader"] == 1
        assert hand["deal"].hands == [orders[b, 0, :9].tolist(), orders[b, 0, 9:18].tolist()]
        assert hand["deal"].boneyard == orders[b, 0, 18:].tolist()
    assert len(first) == 4
