"""OpenSpiel's ISMCTS against this project's ``search`` bot, on the OpenSpiel game ``allfives``.

    python examples/openspiel_ismcts.py --sims 200 --games 2

Seat 0 is ``open_spiel.python.algorithms.ismcts.ISMCTSBot``, searching the real OpenSpiel
state: every simulation starts from ``state.resample_from_infostate`` (a world consistent
with seat 0's information), so it never uses the hidden tiles. Its leaf values come from
``HandRolloutEvaluator`` (a random rollout to the end of the hand). Seat 1 is our ``search``
agent, which sees its :class:`SeatView` only. Each finished game becomes an
``allfives-record/1`` record, checked by ``allfives_env.records.record.replay``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts

import allfives_env.spiel.openspiel  # noqa: F401  (registers "allfives" with pyspiel)
from allfives_agents.base import make_agent
from allfives_agents.planning.openspiel_agent import HandRolloutEvaluator
from allfives_env.game.view import SeatView
from allfives_env.records.record import replay


def play(game: pyspiel.Game, sims: int, search_id: str, seed: int) -> pyspiel.State:
    """One game: ISMCTS in seat 0, ``search_id`` in the other seats."""
    rs = np.random.RandomState(seed)
    bot = ismcts.ISMCTSBot(game, HandRolloutEvaluator(scale=50, seed=seed), 1.0, sims,
                           random_state=rs)
    ours = make_agent(search_id, seed=seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rs.choice(outcomes, p=probs)))
        elif state.current_player() == 0:
            state.apply_action(int(bot.step(state)))
        else:
            view = SeatView.of(state.match.game, state.current_player())
            state.apply_action(ours.act({}, view))
    return state


def main(argv: list[str] | None = None) -> list[list[float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="allfives(preset=five_up)")
    parser.add_argument("--sims", type=int, default=200, help="ISMCTS simulations per move")
    parser.add_argument("--search", default="search", help="our agent id for the other seats")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    game = pyspiel.load_game(args.game)
    results = []
    for k in range(args.games):
        state = play(game, args.sims, args.search, args.seed + k)
        record = state.record([f"ismcts(sims={args.sims})"] + [args.search] * (
            game.num_players() - 1))
        replay(record)  # raises unless the record replays exactly
        print(f"game {k}: returns {state.returns()}, scores {record['final_scores']}, "
              f"{len(record['hands'])} hands (record verified)")
        results.append(state.returns())
    return results


if __name__ == "__main__":
    main()
