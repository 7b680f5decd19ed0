"""No bot reads what its seat may not see: states that differ only in hidden tiles (other hands,
boneyard order) give the same view, the same observation and, for the same seed, the same
action; and nothing a player is given holds the GameState, training and imitation opponents
included (the one seat interface of allfives_env.game.match)."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

from allfives_agents.base import Agent, make_agent
from allfives_env.game.engine import GameState
from allfives_env.game.observation import observe
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import SUIT_MASK, mask_to_tiles
from allfives_env.game.view import SeatView

BOT_IDS = ["random", "greedy", "heuristic", "search:sims=24,min_worlds=4"]


def _allowed(g: GameState, seat: int, tile: int) -> bool:
    """``tile`` could be in ``seat``'s hand as far as the public record goes."""
    return not any(g.lacks[seat] >> k & 1 and SUIT_MASK[k] >> tile & 1 for k in range(7))


def _hidden_twin(g: GameState, seat: int, rng: np.random.Generator) -> GameState | None:
    """A copy of ``g`` that differs only in what ``seat`` cannot see: one tile of another
    hand swapped with an undrawn boneyard tile, and the rest of the boneyard reshuffled."""
    twin = g.copy()
    twin.boneyard = list(g.boneyard)
    undrawn = list(range(g.bone_pos, len(g.boneyard)))
    others = [s for s in range(g.n) if s != seat and g.hands[s]]
    rng.shuffle(others)
    for s in others:
        for t in mask_to_tiles(g.hands[s]):
            for i in undrawn:
                b = g.boneyard[i]
                if _allowed(g, s, b):
                    twin.hands[s] = g.hands[s] ^ (1 << t) ^ (1 << b)
                    twin.boneyard[i] = t
                    rest = twin.boneyard[g.bone_pos:]
                    rng.shuffle(rest)
                    twin.boneyard[g.bone_pos:] = rest
                    return twin
    return None


def _states(n: int) -> list[GameState]:
    rng = np.random.default_rng(7)
    tables = [make_rules("all_fives"), make_rules("five_up", players=3),
              make_rules("all_fives", players=4), make_rules("pagat", players=4, teams=False)]
    out = []
    for k in range(n):
        g = GameState(tables[k % len(tables)], int(rng.integers(1 << 30)), log=False)
        for _ in range(int(rng.integers(0, 12))):
            legal = g.legal_actions()
            g.apply(legal[int(rng.integers(len(legal)))])
            if g.hand_over:
                break
        if not g.hand_over:
            out.append(g)
    return out


@pytest.mark.parametrize("bot_id", BOT_IDS)
def test_hidden_tiles_do_not_change_the_action(bot_id: str) -> None:
    rng = np.random.default_rng(1)
    compared = 0
    for g in _states(60):
        seat = g.current
        twin = _hidden_twin(g, seat, rng)
        if twin is None:
            continue
        assert twin.hands != g.hands  # the hidden information really differs
        view, twin_view = SeatView.of(g, seat), SeatView.of(twin, seat)
        assert view == twin_view
        obs = {"observation": observe(g, seat), "action_mask": np.zeros(140, np.int8)}
        twin_obs = {"observation": observe(twin, seat), "action_mask": obs["action_mask"]}
        assert np.array_equal(obs["observation"], twin_obs["observation"])
        a = make_agent(bot_id, seed=compared).act(obs, view)
        b = make_agent(bot_id, seed=compared).act(twin_obs, twin_view)
        assert a == b
        compared += 1
    assert compared >= 30


def _peeking_choice(g: GameState) -> int:
    """What a cheating bot would do: avoid the replies the next seat can really make."""
    from allfives_agents.rulebased.heuristic import best_scores
    from allfives_env.game.layout import layout_after

    nxt = (g.current + 1) % g.n
    view = SeatView.of(g, g.current)

    def value(a: int) -> tuple[int, int]:
        layout = layout_after(view, a, g.rules.spinner)
        return g.points_if(a) - max(best_scores(layout, g.hands[nxt]), default=0), -a

    return max(view.legal, key=value)


def test_a_peeking_bot_would_be_caught() -> None:
    """The twins are different enough: a bot that reads the next seat's hand acts
    differently on some of them, so the test above could not pass by accident."""
    rng = np.random.default_rng(1)
    caught = 0
    for g in _states(120):
        twin = _hidden_twin(g, g.current, rng)
        if twin is not None:
            caught += _peeking_choice(g) != _peeking_choice(twin)
    assert caught >= 3


# ---------------------------------------------------------------------- one seat interface
class Spy(Agent):
    """Records everything it is given, and plays the first legal move."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.received: list[Any] = []

    def act(self, obs: Any, view: SeatView) -> int:
        self.received.append((obs, view))
        return view.legal[0]


def _reaches_a_game_state(root: Any, depth: int = 4) -> bool:
    seen, frontier = set(), [root]
    for _ in range(depth):
        nxt = []
        for obj in frontier:
            if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type)):
                continue
            seen.add(id(obj))
            if isinstance(obj, GameState):
                return True
            nxt.extend(gc.get_referents(obj))
        frontier = nxt
    return False


def test_the_checker_would_find_a_game_state() -> None:
    assert _reaches_a_game_state({"x": [GameState(make_rules(), 0)]})


def test_training_opponents_get_only_their_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    from allfives_train.games.single_agent import AllFivesSingleAgentEnv

    spy = Spy()
    env = AllFivesSingleAgentEnv(make_rules(), [{"agent": "greedy"}], seed=0)
    env.pool.fixed["greedy"] = spy
    env.reset(seed=1)
    for _ in range(200):
        legal = np.flatnonzero(env.action_masks())
        _, _, term, trunc, _ = env.step(int(legal[0]))
        if term or trunc:
            env.reset()
    assert len(spy.received) > 50
    for obs, view in spy.received[:60]:
        assert isinstance(view, SeatView) and not _reaches_a_game_state((obs, view))


def test_imitation_teacher_gets_only_its_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    import allfives_train.algorithms.maskable_ppo.imitation as imitation
    from allfives_train.config import load_config

    spy = Spy()
    monkeypatch.setattr(imitation, "make_agent", lambda agent_id, seed=None: spy)
    cfg = load_config(None, {"bc_teacher": "greedy", "opponents": [{"agent": "greedy"}]})
    data = imitation.collect(cfg, make_rules(), 40, seed=0)
    assert len(data["actions"]) >= 40 and len(spy.received) >= 40
    for obs, view in spy.received[:40]:
        assert isinstance(view, SeatView) and not _reaches_a_game_state((obs, view))


# ---------------------------------------------------------------------- the action views
@pytest.mark.parametrize("view", ["facts", "heuristic"])
def test_hidden_tiles_do_not_change_the_action_views(view: str) -> None:
    """The re-deal test for the action views (``action_view``): the AEC env shows the same
    rows in a game and its hidden twin (other hands, boneyard order changed)."""
    import allfives_env

    rng = np.random.default_rng(3)
    compared = 0
    for g in _states(60):
        twin = _hidden_twin(g, g.current, rng)
        if twin is None:
            continue
        rows = []
        for state in (g, twin):
            env = allfives_env.env(rules=g.rules, action_view=view)
            env.reset(seed=0)
            env.game, env._legal, env._obs = state, state.legal_actions(), None
            env.agent_selection = env.possible_agents[state.current]
            rows.append(env.observe(env.agent_selection)["action_features"])
        assert rows[0].any() and np.array_equal(rows[0], rows[1])
        compared += 1
    assert compared >= 30


@pytest.mark.parametrize("view", ["facts", "heuristic"])
def test_hidden_tiles_do_not_change_the_batched_action_views(view: str) -> None:
    """The same for the batched engine: swapping a tile of another hand with an undrawn
    boneyard tile (and back) in its arrays leaves the rows of the seat to act as they were."""
    pytest.importorskip("numba")
    from test_batched_bots import _positions

    compared = 0
    for players in (2, 3, 4):
        for games, _, live in _positions("all_fives", players, False, 200, seed=4):
            k, before = games.k, games.action_features(view=view).copy()
            swapped = []
            for b in live:
                seat, pos = games.G[b, k.F_CUR], games.G[b, k.F_BONE_POS]
                other = (seat + 1) % players
                hand = int(games.A[b, k.R_HANDS, other])
                if not hand or pos >= 28:
                    continue
                t, i = (hand & -hand).bit_length() - 1, int(pos)
                u = int(games.T[b, k.T_ORDER, i])
                games.A[b, k.R_HANDS, other] = hand ^ (1 << t) ^ (1 << u)
                games.T[b, k.T_ORDER, i] = t
                swapped.append((b, other, hand, i, u))
            after = games.action_features(view=view)
            for b, other, hand, i, u in swapped:  # put the games back as they were
                games.A[b, k.R_HANDS, other] = hand
                games.T[b, k.T_ORDER, i] = u
            assert np.array_equal(before, after)
            compared += len(swapped)
    assert compared >= 100
