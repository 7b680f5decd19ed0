"""The batched `search` (agents/batched/search.py) against the scalar one, head to head, and
what a decision costs each (docs/batched.md, "Batched bots").

Every game is played by both engines at once on the same deals: the scalar ``GameState`` and
one slot of a ``BatchedGames``, fed the same moves. Seat ``p`` of game ``g`` plays the batched
`search`, the other seat the scalar `search` (same options); each deal is played twice,
once with each engine at each seat (duplicate deals). Deal ``(g, hand)`` is drawn from
``default_rng([seed, g, hand])``. Times are CPU seconds per decision in this process, so the
ratio of the two is the figure to read. Run from the repository root:

    PYTHONPATH=. python experiments/batched/search_check.py --deals 500 --seed 4406
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from allfives_agents.base import make_agent
from allfives_agents.batched.bots import make_batched_bot
from allfives_agents.evaluation.stats import wilson
from allfives_env.batched_engine.games import BatchedGames
from allfives_env.game.engine import Deal, Dealer, GameState, random_deal
from allfives_env.game.rules import Rules, make_rules
from allfives_env.game.view import SeatView


def deal_for(rules: Rules, seed: int, game: int, hand: int) -> Deal:
    rng = np.random.default_rng([seed, game, hand])
    deal = random_deal(rules, rng)
    deal.leader = int(rng.integers(rules.players))
    return deal


def play(rules: Rules, agent_id: str, seed: int, games: list[int], batched_seat: list[int],
         clock: dict[str, list[float]]) -> list[int]:
    """Play ``games`` (deal numbers) at once; return each game's winning seat (-1: none)."""
    n = len(games)

    def scalar_dealer(b: int) -> Dealer:
        return lambda h, _rng: deal_for(rules, seed, games[b], h)

    batch = BatchedGames(rules, n, seed=seed, autoreset=False,
                         dealer=lambda b, h: deal_for(rules, seed, games[b], h))
    batch.reset()
    states = [GameState(rules, log=False, dealer=scalar_dealer(b)) for b in range(n)]
    bot, scalar = make_batched_bot(agent_id, seed=seed), make_agent(agent_id, seed=seed + 1)
    bot.act(batch, np.arange(1))  # compiles the kernel outside the clock
    while not all(s.game_over for s in states):
        for b, st in enumerate(states):  # both engines stand at the same place
            assert st.game_over or (batch.current[b] == st.current
                                    and list(batch.scores[b][:2]) == list(st.scores)), b
        actions = np.full(n, -1, dtype=np.int64)
        mine = [b for b, s in enumerate(states) if not s.game_over
                and s.current == batched_seat[b]]
        t = time.process_time()
        if mine:
            actions[mine] = bot.act(batch, np.array(mine, dtype=np.int64))
        clock["batched"] += [time.process_time() - t, len(mine)]
        for b, st in enumerate(states):
            if not st.game_over and st.current != batched_seat[b]:
                t = time.process_time()
                actions[b] = scalar.act({}, SeatView.of(st, st.current))
                clock["scalar"] += [time.process_time() - t, 1]
        batch.step(actions)
        for b, st in enumerate(states):
            if actions[b] >= 0:
                st.apply(int(actions[b]))
                if st.hand_over and not st.game_over:
                    st.next_hand()
    return [-1 if s.winner is None else int(s.winner) for s in states]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=500)
    ap.add_argument("--seed", type=int, default=4406)
    ap.add_argument("--agent", default="search")
    ap.add_argument("--chunk", type=int, default=50)
    args = ap.parse_args()
    rules = make_rules("all_fives", players=2)
    clock: dict[str, list[float]] = {"batched": [], "scalar": []}
    wins = total = 0.0
    for start in range(0, args.deals, args.chunk):
        deals = list(range(start, min(start + args.chunk, args.deals)))
        for seat in (0, 1):
            for winner in play(rules, args.agent, args.seed, deals, [seat] * len(deals), clock):
                wins += 1.0 if winner == seat else 0.5 if winner < 0 else 0.0
                total += 1
        lo, hi = wilson(wins / total, int(total))
        print(f"{int(total)} games: batched {args.agent} won {wins:g} "
              f"({wins / total:.1%} [{lo:.1%}, {hi:.1%}])", flush=True)
    cost = {k: sum(v[::2]) / max(sum(v[1::2]), 1) * 1000 for k, v in clock.items()}
    print(f"CPU ms per decision: batched {cost['batched']:.3f}, scalar {cost['scalar']:.3f}, "
          f"ratio {cost['scalar'] / cost['batched']:.0f}x")


if __name__ == "__main__":
    main()
