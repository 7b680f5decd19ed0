"""``openspiel:<algorithm>,<options>`` agents: OpenSpiel's search bots playing All Fives.

* ``openspiel:ismcts,sims=400`` -- OpenSpiel's information-set MCTS
  (``open_spiel.python.algorithms.ismcts.ISMCTSBot``; the C++ ``pyspiel.ISMCTSBot`` crashes on
  Python games in open_spiel 2.0, see docs/openspiel.md). Every simulation starts from a
  world re-sampled from the seat's view (``allfives_agents.planning.search.WorldSampler``, the
  distribution of :meth:`SeatView.sample_state`).
* ``openspiel:mcts,sims=400,worlds=8`` -- OpenSpiel's ``MCTSBot`` on ``worlds`` sampled
  worlds (determinized MCTS), ``sims / worlds`` simulations each; root visit counts are
  summed over the worlds.

Options: ``sims`` (default 400), ``uct_c`` (1.0), ``eval`` (``hand``: a random rollout to
the end of the hand in the engine, valued by the score margin, ``tanh(margin / scale)``, or
+-1 when the game ends in it; ``random``: OpenSpiel's ``RandomRolloutEvaluator``, random play
to the end of the game through the OpenSpiel API, much slower), ``scale`` (50), ``worlds``
(mcts only, 8). ``sims`` and ``worlds`` have upper bounds, :data:`BOUNDS`.

Honesty: the agent gets only the seat's observation and :class:`SeatView`. It builds the
OpenSpiel state with :func:`allfives_env.spiel.openspiel.state_for_view`, whose hidden tiles are a
sample consistent with the view, and whose ``resample_from_infostate`` samples again from
the view; it never sees the real hidden hands or the boneyard order.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from allfives_agents.base import Agent, Obs, register_prefix
from allfives_agents.options import check_bounds, prefix_options
from allfives_agents.planning.deadline import out_of_time
from allfives_env.game.view import SeatView

ALGORITHMS = ("ismcts", "mcts")
DEFAULTS: dict[str, Any] = {"sims": 400, "uct_c": 1.0, "eval": "hand", "scale": 50.0,
                            "worlds": 8}
#: Upper bounds of the options that scale the work of a decision (simulations, and the
#: sampled worlds of ``mcts``), refused above (docs/faults.md).
BOUNDS: dict[str, float] = {"sims": 100_000, "worlds": 1_000}
INSTALL_HINT = ("openspiel: agents need the open_spiel package: "
                "pip install 'allfives[openspiel]' (or pip install 'open_spiel>=2.0,<2.1')")


def need_openspiel() -> None:
    """Import pyspiel, or raise a one-line ValueError with the install command."""
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        raise ValueError(INSTALL_HINT) from None


class HandRolloutEvaluator:
    """OpenSpiel evaluator: one random rollout to the end of the hand in the engine (the
    boneyard's unknown order shuffled), valued ``tanh(margin / scale)`` per seat, where
    margin is its side's score minus the best other side's; +1/-1 when the game ends."""

    def __init__(self, scale: float, seed: int) -> None:
        self.scale, self.rnd = scale, random.Random(seed)

    def evaluate(self, state: Any) -> np.ndarray:
        from allfives_agents.planning.search import rollout
        from allfives_env.spiel.openspiel_core import DRAW, PLAY

        if state.is_terminal():
            return np.array(state.returns())
        m = state.match
        world = m.game
        if m.phase in (PLAY, DRAW):  # a draw node: run the pending play again, drawing
            base = m.game if m.phase == PLAY else m.base
            world = self._shuffled(base, m.bones.drawn[base.bone_pos:] if m.phase == DRAW else [])
            if m.phase == DRAW:
                world.apply(m.pending)
            rollout(world, self.rnd, eps=1.0)
        return np.array(self._values(world))

    def _shuffled(self, g: Any, known: list[int]) -> Any:
        """A copy of ``g`` whose undrawn boneyard is ``known`` (already revealed by chance),
        then the other tiles in random order."""
        world = g.copy()
        taken = 0
        for h in world.hands:
            taken |= h
        rest = [t for t in range(28)
                if not taken >> t & 1 and g.played_by[t] < 0 and t not in known]
        self.rnd.shuffle(rest)
        world.boneyard = [-1] * g.bone_pos + known + rest
        return world

    def _values(self, world: Any) -> list[float]:
        rules, out = world.rules, []
        for s in range(world.n):
            side = rules.side_of(s)
            if world.game_over:
                out.append(0.0 if world.winner is None else (1.0 if world.winner == side else -1.0))
                continue
            best = max(sc for i, sc in enumerate(world.scores) if i != side)
            out.append(math.tanh((world.scores[side] - best) / self.scale))
        return out

    def prior(self, state: Any) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class OutOfTime(Exception):
    """A move's deadline passed (:mod:`allfives_agents.planning.deadline`) after at least one
    simulation: the search stops and the move is chosen from what it has visited."""


def _bounded_bots() -> tuple[type, type]:
    """OpenSpiel's ISMCTS and MCTS bots that stop at a move's deadline: before each
    simulation at the root, past the deadline (or once the move is cancelled) and with at
    least one simulation done, they raise :class:`OutOfTime`; without a deadline they are
    OpenSpiel's bots unchanged."""
    from open_spiel.python.algorithms import ismcts, mcts

    class BoundedISMCTS(ismcts.ISMCTSBot):  # type: ignore[misc,unused-ignore]
        def sample_root_state(self, state: Any) -> Any:
            if self._root_node.total_visits > 0 and out_of_time():
                raise OutOfTime
            return super().sample_root_state(state)

    class BoundedMCTS(mcts.MCTSBot):  # type: ignore[misc,unused-ignore]
        def _apply_tree_policy(self, root: Any, state: Any) -> Any:
            self.last_root = root
            if root.explore_count > 0 and out_of_time():
                raise OutOfTime
            return super()._apply_tree_policy(root, state)

    return BoundedISMCTS, BoundedMCTS


class OpenSpielAgent(Agent):
    """OpenSpiel ISMCTS or determinized MCTS (see the module docstring)."""

    needs_obs = False

    def __init__(self, algorithm: str, seed: int | None = None, **options: Any) -> None:
        super().__init__(seed)
        unknown = sorted(set(options) - set(DEFAULTS))
        if algorithm not in ALGORITHMS or unknown:
            raise ValueError(f"openspiel: algorithms are {', '.join(ALGORITHMS)} and options "
                             f"{', '.join(DEFAULTS)} (got {algorithm!r}, {unknown or ''})")
        opts = {**DEFAULTS, **options}
        self.algorithm = algorithm
        try:
            self.sims, self.worlds = int(opts["sims"]), int(opts["worlds"])
            self.uct_c, self.scale = float(opts["uct_c"]), float(opts["scale"])
        except (TypeError, ValueError, OverflowError):
            raise ValueError("openspiel: sims and worlds must be integers, uct_c and scale "
                             f"numbers (got {str(options)[:80]})") from None
        check_bounds("openspiel", {"sims": self.sims, "worlds": self.worlds}, BOUNDS)
        self.eval = opts["eval"]
        if not (math.isfinite(self.uct_c) and self.uct_c >= 0 and math.isfinite(self.scale)
                and self.scale > 0):
            raise ValueError(f"openspiel: uct_c must be a finite number >= 0 and scale one > 0 "
                             f"(got uct_c={self.uct_c}, scale={self.scale})")
        if self.sims < 1 or self.worlds < 1 or self.eval not in ("hand", "random"):
            raise ValueError("openspiel: sims and worlds must be >= 1 and eval hand or random "
                             f"(got sims={self.sims}, worlds={self.worlds}, eval={self.eval!r})")
        need_openspiel()
        self._bots: dict[int, Any] = {}

    def reset(self, seed: int | None = None) -> None:
        """A new game: re-seed, and rebuild the bots from the new seed (so a game does not
        depend on the games this agent played before)."""
        super().reset(seed)
        if seed is not None:
            self._bots = {}

    def _bot(self, game: Any) -> Any:
        from open_spiel.python.algorithms import mcts

        ismcts_bot, mcts_bot = _bounded_bots()
        key = id(game)  # games are cached for the process (allfives_env.spiel.openspiel.game_for)
        if key not in self._bots:
            rs = np.random.RandomState(int(self.rng.integers(1 << 31)))
            seed = int(self.rng.integers(1 << 31))
            ev = (HandRolloutEvaluator(self.scale, seed) if self.eval == "hand"
                  else mcts.RandomRolloutEvaluator(1, rs))
            if self.algorithm == "ismcts":
                bot = ismcts_bot(game, ev, self.uct_c, self.sims, random_state=rs)
            else:
                per_world = max(1, self.sims // self.worlds)
                bot = mcts_bot(game, self.uct_c, per_world, ev, solve=False,
                                   random_state=rs)
            self._bots[key] = bot
        return self._bots[key]

    def act(self, obs: Obs, view: SeatView) -> int:
        from allfives_agents.planning.search import WorldSampler
        from allfives_env.spiel.openspiel import game_for, state_for_view

        if len(view.legal) == 1:
            return view.legal[0]
        bot = self._bot(game_for(view.rules))
        if self.algorithm == "ismcts":
            sampler = WorldSampler(view, self.rng)  # the view's distribution, drawn faster
            bot.set_resampler(
                lambda _state, _player: state_for_view(view, self.rng, world=sampler.sample()))
            state = state_for_view(view, self.rng, world=sampler.sample())
            try:
                return int(bot.step(state))
            except OutOfTime:  # choose from the visits so far, as step does from all of them
                actions, probs = zip(*bot.get_final_policy(state, bot._root_node))
                return int(bot._random_state.choice(actions, p=probs))
        visits: dict[int, int] = {}
        for w in range(self.worlds):
            if w and out_of_time():
                break
            try:
                root = bot.mcts_search(state_for_view(view, self.rng))
            except OutOfTime:
                root = bot.last_root
            for child in root.children:
                visits[child.action] = visits.get(child.action, 0) + child.explore_count
        return max(sorted(visits), key=lambda a: visits[a])


def load(rest: str, seed: int | None) -> Agent:
    """``openspiel:ismcts,sims=400`` -> the agent (``rest`` is ``ismcts,sims=400``)."""
    algorithm, options = prefix_options("openspiel", rest)
    return OpenSpielAgent(algorithm, seed=seed, **options)


register_prefix("openspiel", load)
