"""Measure the OpenSpiel game: random play through the OpenSpiel API against the engine
directly (same process, same rules), and ``resample_from_infostate`` (time, fallbacks).

    python examples/openspiel_bench.py --games 20
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyspiel

import allfives_env.spiel.openspiel  # noqa: F401  (registers "allfives")
from allfives_env.benchmarks.bench import play_random
from allfives_env.game.engine import GameState
from allfives_env.game.rules import make_rules
from allfives_env.spiel.openspiel_resample import FALLBACKS


def engine_plays(rules, games: int, rng: np.random.Generator) -> int:
    draws: list[float] = []
    return sum(play_random(GameState(rules, k, log=True), rng, draws) for k in range(games))


def openspiel_plays(game, games: int, rng: np.random.Generator, resample: bool) -> int:
    plays = 0
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    for _ in range(games):
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
                continue
            if resample:
                s.resample_from_infostate(s.current_player(), sampler)
            legal = s.legal_actions()
            s.apply_action(legal[int(rng.integers(len(legal)))])
            plays += 1
    return plays


def timed(fn, *args) -> tuple[int, float]:
    start = time.perf_counter()
    n = fn(*args)
    return n, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rules = make_rules("all_fives")
    game = pyspiel.load_game("allfives")
    for _ in range(2):
        n_e, t_e = timed(engine_plays, rules, args.games, rng)
        n_o, t_o = timed(openspiel_plays, game, args.games, rng, False)
        print(f"per play: engine {1e6 * t_e / n_e:.1f} us, OpenSpiel API {1e6 * t_o / n_o:.1f} us"
              f" (chance nodes included): ratio {(t_o / n_o) / (t_e / n_e):.1f}")
    for spec in ("allfives", "allfives(players=3,preset=muggins)",
                 "allfives(players=4,preset=five_up)"):
        before = dict(FALLBACKS)
        n_r, t_r = timed(openspiel_plays, pyspiel.load_game(spec), 5, rng, True)
        n_p, t_p = timed(openspiel_plays, pyspiel.load_game(spec), 5, rng, False)
        done = FALLBACKS["resamples"] - before["resamples"]
        print(f"{spec}: {done} resamples, {FALLBACKS['fallbacks'] - before['fallbacks']} "
              f"fallbacks, about {1e3 * (t_r - t_p * n_r / n_p) / done:.2f} ms each")


if __name__ == "__main__":
    main()
