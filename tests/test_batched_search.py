"""The batched ``search`` (numba, :mod:`allfives_agents.batched.search`) against the scalar one.

Where the world is known (2 seats, nothing left to draw and nothing kept back: the unseen
tiles are the other hand), sampling plays no part and both must choose the same move, for
the default options and for others. Elsewhere they draw worlds from the same distribution
with their own streams: every dealt world is checked against what the seat has seen, and how
often each tile lands in each hand is compared with the scalar ``WorldSampler``. Dealing the
hidden tiles otherwise must leave every choice as it was (it never peeks).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

pytest.importorskip("numba")

from test_batched_bots import _positions  # noqa: E402

from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.batched.bots import make_batched_bot  # noqa: E402
from allfives_agents.planning.search import WorldSampler  # noqa: E402
from allfives_agents.rulebased.heuristic import lacks_mask  # noqa: E402
from allfives_env.batched_engine.games import BatchedGames  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402

OPTIONS = ["search", "search:depth=0,defend=0.5", "search:defend=0,leaf=0,dleaf=0,win=30,sims=16"]


def _known_positions(preset: str, decisions: int):
    """(games, game, view) where the seat to act sees its world whole and has a choice."""
    for games, states, live in _positions(preset, 2, False, decisions, seed=3):
        for b in live:
            st = states[b]
            view = SeatView.of(st, st.current)
            if len(view.legal) > 1 and view.unseen == st.hands[1 - st.current]:
                yield games, int(b), view


def assert_known_world_values(scalar, values_of, decisions: int, at_least: int) -> None:
    """On ``at_least`` known-world positions where ``scalar`` has a choice to search,
    ``values_of(games, b)`` (the batched search's chosen move and its row of move values)
    equals the scalar agent's ``rollout_means`` and move."""
    compared = 0
    for games, b, view in _known_positions("all_fives", decisions):
        if scalar.obvious(view) is not None:
            continue
        best, values = values_of(games, b)
        legal = list(view.legal)
        want = scalar.rollout_means(view, legal, max(scalar.min_worlds,
                                                     scalar.sims // len(legal)))
        assert np.flatnonzero(~np.isnan(values)).tolist() == sorted(legal)
        assert np.allclose(values[legal], want, rtol=0, atol=1e-9), (b, legal)
        assert best == scalar.act({}, view)
        compared += 1
        if compared >= at_least:
            break
    assert compared >= at_least


@pytest.mark.slow
@pytest.mark.parametrize("agent_id", OPTIONS)
@pytest.mark.parametrize("preset", ["all_fives", "muggins"])
def test_same_choice_as_scalar_search_where_the_world_is_known(agent_id: str,
                                                               preset: str) -> None:
    bot = make_batched_bot(agent_id, seed=1)
    scalar = make_agent(agent_id, seed=2)
    compared = 0
    for games, b, view in _known_positions(preset, 30000):
        got = bot.act(games, np.array([b]))[0]
        assert got == scalar.act({}, view), (agent_id, b, view)
        compared += 1
    assert compared >= 200


def _worlds(games: BatchedGames, b: int, count: int) -> list[tuple[list[int], list[int]]]:
    """``count`` worlds dealt by the kernel for game b: (hands, undrawn boneyard order)."""
    from allfives_agents.batched import search as k

    rng = np.arange(games.batch, dtype=np.uint64) + np.uint64(12345)
    W = np.zeros((2, games.G.shape[1]), dtype=games.G.dtype)
    AW = np.zeros((2, *games.A.shape[1:]), dtype=games.A.dtype)
    TW = np.zeros((2, *games.T.shape[1:]), dtype=games.T.dtype)
    pool = np.empty(28, dtype=np.int64)
    out = []
    pos = int(games.G[b, games.k.F_BONE_POS])
    for _ in range(count):
        k.deal_world(b, games.R, games.G, games.A, games.T, rng, W, AW, TW, pool)
        assert (W[0] == games.G[b]).all()  # the game's scalars are the world's
        hands = [int(h) for h in AW[0, games.k.R_HANDS]]
        out.append((hands, [int(t) for t in TW[0, games.k.T_ORDER, pos:]]))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("preset,players", [("five_up", 3), ("all_fives", 2), ("pagat", 4)])
def test_dealt_worlds_agree_with_the_view_and_the_scalar_sampler(preset: str,
                                                                 players: int) -> None:
    checked = 0
    for games, states, live in _positions(preset, players, False, 400, seed=5):
        for b in live[:2]:
            st = states[b]
            view = SeatView.of(st, st.current)
            if st.current != view.seat or not any(view.lacks) or checked >= 6:
                continue
            worlds = _worlds(games, int(b), 1500)
            sampler = WorldSampler(view, np.random.default_rng(0))
            freq = np.zeros((2, players, 28))
            for hands, bone in worlds:
                dealt = 0
                for s in range(players):
                    if s == view.seat:
                        assert hands[s] == view.hand
                        continue
                    assert hands[s].bit_count() == view.hand_sizes[s]
                    assert hands[s] & view.unseen == hands[s] and not hands[s] & dealt
                    assert not hands[s] & lacks_mask(view.lacks[s])
                    dealt |= hands[s]
                    freq[0, s] += [hands[s] >> t & 1 for t in range(28)]
                rest = sorted(t for t in range(28) if view.unseen >> t & 1 and not dealt >> t & 1)
                assert sorted(bone) == rest
            for _ in range(1500):
                world = sampler.sample()
                for s in range(players):
                    if s != view.seat:
                        freq[1, s] += [world.hands[s] >> t & 1 for t in range(28)]
            assert np.abs(freq[0] - freq[1]).max() / 1500 < 0.08
            checked += 1
        if checked >= 6:
            break
    assert checked >= 3


@pytest.mark.parametrize("preset,players", [("five_up", 3), ("all_fives", 2)])
def test_it_never_peeks(preset: str, players: int) -> None:
    """The hidden tiles dealt otherwise (another world the seat cannot tell from the real
    one) leave every choice as it was, draw for draw."""
    compared = 0
    for games, states, live in _positions(preset, players, False, 600, seed=6):
        other = copy.copy(games)
        other.A, other.T = games.A.copy(), games.T.copy()
        for b in live:  # another world, dealt by the scalar sampler from the seat's view
            view = SeatView.of(states[b], states[b].current)
            world = WorldSampler(view, np.random.default_rng(int(b))).sample()
            for s in range(players):
                other.A[b, games.k.R_HANDS, s] = world.hands[s]
            pos = int(games.G[b, games.k.F_BONE_POS])
            other.T[b, games.k.T_ORDER, pos:] = world.boneyard
        changed = (other.A != games.A).any() or (other.T != games.T).any()
        got = make_batched_bot("search:sims=16", seed=3).act(games, live)
        assert (make_batched_bot("search:sims=16", seed=3).act(other, live) == got).all()
        compared += len(live) if changed else 0
    assert compared >= 300


@pytest.mark.parametrize("preset,players,teams", [("five_up", 3, False), ("all_fives", 4, True)])
def test_legal_and_seeded_with_more_seats(preset: str, players: int, teams: bool) -> None:
    def run(seed: int) -> list[int]:
        games = BatchedGames(make_rules(preset, players=players, teams=teams), 16, seed=4)
        games.reset()
        bot, picks = make_batched_bot("search:sims=16", seed=seed), []
        for _ in range(60):
            idx = np.flatnonzero(games.in_play).astype(np.int64)
            actions = np.full(16, -1, dtype=np.int64)
            actions[idx] = bot.act(games, idx)
            mask = games.legal_mask()
            assert mask[idx, actions[idx]].all()
            picks += actions[idx].tolist()
            games.step(actions)
        return picks

    assert run(7) == run(7)


def test_bad_options_and_net_are_refused() -> None:
    with pytest.raises(ValueError, match="sims"):
        make_batched_bot("search:sims=0")
    with pytest.raises(ValueError, match="infer has no batched version"):
        make_batched_bot("search:net=checkpoints/all_fives_2p,infer=0.5")
