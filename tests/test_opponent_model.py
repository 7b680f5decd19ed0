"""``PlayMemory``: what the other seat's plays say about its hand (2 seats)."""

from __future__ import annotations

from allfives_agents.base import make_agent
from allfives_agents.rulebased.opponent_model import PlayMemory
from allfives_env.game.match import new_game, seat_input
from allfives_env.game.rules import make_rules


def penalties_of_the_true_hand(opponent: str, seed: int) -> tuple[list[int], int]:
    """Play a game, seat 0 greedy with a memory; at each of its decisions, the penalty the
    memory gives to seat 1's real hand (a test may look at it), and the plays remembered."""
    rules = make_rules("all_fives")
    state = new_game(rules, seed)
    me, other = make_agent("greedy"), make_agent(opponent, seed=seed)
    memory = PlayMemory("points")
    out, remembered = [], 0
    while not state.game_over:
        if state.hand_over:
            state.next_hand()
            continue
        obs, view = seat_input(state, state.current)
        if state.current == 0:
            memory.see(view)
            out.append(memory.penalty(state.hands[1]))
            remembered += len(memory.plays)
            action = me.act(obs, view)
            memory.chose(view, action)
        else:
            action = other.act(obs, view)
        state.apply(action)
    return out, remembered


def test_a_greedy_opponent_never_left_points_with_the_tiles_it_still_holds() -> None:
    for seed in range(3):
        penalties, remembered = penalties_of_the_true_hand("greedy", seed)
        assert remembered > 0
        assert set(penalties) == {0}


def test_a_random_opponent_is_caught_leaving_points() -> None:
    penalties, _ = penalties_of_the_true_hand("random", 0)
    assert max(penalties) > 0


def test_other_table_sizes_remember_nothing() -> None:
    rules = make_rules("all_fives", players=3)
    state = new_game(rules, 1)
    memory = PlayMemory()
    _, view = seat_input(state, state.current)
    memory.see(view)
    memory.chose(view, view.legal[0])
    assert memory.plays == [] and memory.penalty(state.hands[1]) == 0
