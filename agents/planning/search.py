"""``search``: determinized search over sampled hidden hands.

At each decision with more than one legal move, the agent samples ``worlds`` full states
that agree with everything its seat has seen: hand sizes, tiles played, the numbers each seat
is known to lack from its draws and passes (:class:`WorldSampler`, the distribution of
:meth:`SeatView.sample_state`). In every world it plays each candidate move, then lets the
game run on with a fast policy in which every seat, knowing the world, takes the move worth
most now minus ``defend`` x the best reply the next seat can make (plus when it is a
partner); with chance ``eps`` a random move instead. The rollout stops when the searching seat
is about to play for the ``depth + 1``-th time after the candidate (``depth=0``: at the end of
the hand), or at the end of the hand or game.

A rollout is worth the points the own side gained minus the most any other side gained (the
end-of-hand scoring included when the hand ends), plus or minus ``win`` when the game is won
or lost in it; while the hand goes on, each side is also charged ``leaf`` per pip and
``dleaf`` per double still in its hands. The same worlds serve every candidate (common
random numbers). The best mean wins; ties go to the lowest action id. A play that reaches
the target under ``win_check: immediate`` is taken at once.

Options (``search:sims=128,depth=2``), defaults in :data:`DEFAULTS`: ``sims`` rollouts per
decision, spread over the candidates (``worlds = max(min_worlds, sims // candidates)``),
``min_worlds``, ``eps``, ``defend``, ``depth``, ``leaf``, ``dleaf``, ``win``. The defaults
were tuned by duplicate matches against ``heuristic`` (docs/bots-and-eval.md); a decision takes
about 5-10 ms on one core. The options that scale the work have upper bounds, :data:`BOUNDS`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from allfives_agents.base import Agent, Obs
from allfives_agents.options import numeric_options
from allfives_agents.planning.deadline import out_of_time
from allfives_agents.rulebased.heuristic import best_scores, lacks_mask
from allfives_env.game.engine import GameState
from allfives_env.game.layout import layout_after
from allfives_env.game.tiles import DOUBLES_MASK, mask_to_tiles
from allfives_env.game.view import SeatView

DEFAULTS: dict[str, float] = {"sims": 64, "min_worlds": 8, "eps": 0.0, "defend": 1.0,
                              "depth": 1, "leaf": 0.5, "dleaf": 5.0, "win": 100.0}
#: Upper bounds of the options that scale the work of a decision (rollouts: about
#: ``max(sims, min_worlds x moves)``, each at most ``depth`` turns of the seat, 0 = the rest of
#: the hand): generous for real use (docs and configs use sims <= 1024, depth <= 3), refused
#: above (docs/faults.md).
BOUNDS: dict[str, float] = {"sims": 100_000, "min_worlds": 10_000, "depth": 20}


def rollout(state: GameState, rnd: random.Random, eps: float, seat: int = -1,
            depth: int = 0, defend: float = 0.0,
            own: Callable[[GameState, list[int]], int] | None = None,
            others: Callable[[GameState, list[int]], int] | None = None) -> None:
    """Play ``state`` on with a fast policy: every seat takes the move that scores most now
    (minus ``defend`` x the best reply the next seat can make from its hand, plus when
    that seat is a partner), and with chance ``eps`` a random move instead; with ``own``,
    ``seat`` plays ``own(state, legal)`` instead, and with ``others`` every other seat plays
    ``others(state, legal)``. Stop at the end of the hand or game, or, with ``depth > 0``,
    when ``seat`` is about to play for the ``depth + 1``-th time."""
    turns = 0
    while not state.hand_over:
        current = state.current
        if depth and current == seat:
            turns += 1
            if turns > depth:
                return
        legal = state.legal_actions()
        if len(legal) == 1:
            action = legal[0]
        elif own is not None and current == seat:
            action = own(state, legal)
        elif others is not None and current != seat:
            action = others(state, legal)
        elif eps and rnd.random() < eps:
            action = legal[int(rnd.random() * len(legal))]
        elif defend:
            action = _defensive_choice(state, legal, defend)
        else:
            action, best = legal[0], -1
            points_if = state.points_if
            for a in legal:
                p = points_if(a)
                if p > best:
                    action, best = a, p
        state.apply(action)


def _defensive_choice(state: GameState, legal: list[int], defend: float) -> int:
    seat = state.current
    nxt = seat + 1 if seat + 1 < state.n else 0
    sign = defend if state.side[nxt] == state.side[seat] else -defend
    hand, opp = state.hands[seat], state.hands[nxt]
    action, best = legal[0], -1e9
    for a in legal:
        if hand == 1 << (a // 5):
            return a  # going out
        layout = layout_after(state, a, state.rules.spinner)
        v = state.points_if(a) + sign * max(best_scores(layout, opp), default=0)
        if v > best:
            action, best = a, v
    return action


def outcome(state: GameState, side: int, before: list[int], win: float, leaf: float,
            dleaf: float = 0.0) -> float:
    """Own side's gain minus the best other side's gain since ``before``, plus ``win`` for a
    game won (minus for lost). When the hand goes on, each side is also charged ``leaf`` per
    pip and ``dleaf`` per double it still holds (own side's charge against the smallest)."""
    gains: list[float] = [s - b for s, b in zip(state.scores, before)]
    if state.game_over and state.winner is not None:
        bonus = win if state.winner == side else -win
    elif not state.hand_over and (leaf or dleaf):
        held = [0.0] * len(gains)
        for s in range(state.n):
            doubles = (state.hands[s] & DOUBLES_MASK).bit_count()
            held[state.side[s]] += leaf * state.pips_left(s) + dleaf * doubles
        gains = [g - c for g, c in zip(gains, held)]
        bonus = 0.0
    else:
        bonus = 0.0
    return gains[side] - max(g for i, g in enumerate(gains) if i != side) + bonus


class Worlds(Protocol):
    """Where a search's worlds come from: ``sample()`` one full state, and ``rnd`` the
    generator of the rollouts."""

    rnd: random.Random

    def sample(self) -> GameState: ...


class WorldSampler:
    """Fast :meth:`SeatView.sample_state`: the same distribution (each hidden hand a uniform
    choice among the unseen tiles its seat is not known to lack, most constrained seat
    first, the rest in random boneyard order), drawn with one shuffle per world and a copy
    of one template state. Falls back to the view's own sampler when a draw fails."""

    def __init__(self, view: SeatView, rng: np.random.Generator) -> None:
        self.view, self.rng = view, rng
        self.template = view.sample_state(rng)
        self.unseen = mask_to_tiles(view.unseen)
        others = [s for s in range(view.n) if s != view.seat]
        allowed = {s: view.unseen & ~lacks_mask(view.lacks[s]) for s in others}
        order = sorted(others, key=lambda s: allowed[s].bit_count() - view.hand_sizes[s])
        self.seats = [(s, allowed[s], view.hand_sizes[s]) for s in order]
        self.reserve = view.boneyard_size - view.drawable
        self.rnd = random.Random(int(rng.integers(1 << 62)))

    def sample(self, tries: int = 20) -> GameState:
        pool = self.unseen[:]
        for _ in range(tries):
            hands = self._deal(pool)
            if hands is not None:
                world = self.template.copy()
                taken = 0
                for s, h in hands:
                    world.hands[s] = h
                    taken |= h
                world.boneyard = [t for t in pool if not taken >> t & 1]
                self.rnd.shuffle(world.boneyard)
                world.bone_pos, world.bone_end = 0, len(world.boneyard) - self.reserve
                return world
        return self.view.sample_state(self.rng)

    def _deal(self, pool: list[int]) -> list[tuple[int, int]] | None:
        """Each seat in turn takes ``need`` tiles it may hold, uniformly from those left (a
        fresh shuffle per seat keeps the picks independent)."""
        taken, out = 0, []
        for s, allowed, need in self.seats:
            hand = 0
            if need:
                self.rnd.shuffle(pool)
                for t in pool:
                    bit = 1 << t
                    if allowed & bit and not taken & bit:
                        hand |= bit
                        need -= 1
                        if not need:
                            break
                if need:
                    return None
            taken |= hand
            out.append((s, hand))
        return out


class SearchAgent(Agent):
    """Determinized rollout search; options in :data:`DEFAULTS`."""

    needs_obs = False

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        super().__init__(seed)
        opts = numeric_options("search", options, DEFAULTS, BOUNDS)
        self.sims, self.min_worlds, self.depth = (int(opts[k]) for k in ("sims", "min_worlds",
                                                                         "depth"))
        self.eps, self.defend, self.win = opts["eps"], opts["defend"], opts["win"]
        self.leaf, self.dleaf = opts["leaf"], opts["dleaf"]
        if self.sims < 1 or self.min_worlds < 1 or self.depth < 0 or not 0 <= self.eps <= 1:
            raise ValueError("search: sims and min_worlds must be >= 1, depth >= 0 and eps in "
                             f"[0, 1] (got sims={self.sims}, min_worlds={self.min_worlds}, "
                             f"depth={self.depth}, eps={self.eps})")

    def act(self, obs: Obs, view: SeatView) -> int:
        quick = self.obvious(view)
        if quick is not None:
            return quick
        legal = view.legal
        worlds = max(self.min_worlds, self.sims // len(legal))
        totals, _ = self.rollout_totals(view, list(legal), worlds)
        best = max(range(len(legal)), key=lambda k: (totals[k], -legal[k]))
        return legal[best]

    @staticmethod
    def obvious(view: SeatView) -> int | None:
        """The move taken without search: the only legal one, or a play that reaches the
        target now under ``win_check: immediate``; else None."""
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        if view.rules.immediate_win:
            for a in legal:  # a play that reaches the target wins the game now
                if view.scores[view.side] + view.points_if(a) >= view.target:
                    return a
        return None

    def rollout_totals(self, view: SeatView, moves: list[int], worlds: int
                       ) -> tuple[list[float], float]:
        """Each move's rollout outcomes summed over ``worlds`` sampled worlds (the same
        worlds for every move), each weighted by :meth:`world_weight`; and the sum of the
        weights. Under a move deadline (:mod:`allfives_agents.planning.deadline`) it stops at the
        first world past it (at least one world is searched)."""
        side, before = view.side, list(view.scores)
        totals, weight_sum = [0.0] * len(moves), 0.0
        sampler = self.world_sampler(view)
        for done in range(worlds):
            if done and out_of_time():  # past the move's deadline: what is searched so far
                break
            world = sampler.sample()
            weight = self.world_weight(view, world)
            weight_sum += weight
            seed = sampler.rnd.random()
            ends = []
            for a in moves:
                state = world.copy()
                state.apply(a)
                rnd = random.Random(seed) if self.eps else sampler.rnd
                self.play_out(state, rnd, view.seat)
                ends.append(state)
            for k, value in enumerate(self.outcomes(ends, side, before, view.seat)):
                totals[k] += weight * value
        return totals, weight_sum

    def outcomes(self, states: list[GameState], side: int, before: list[int], seat: int
                 ) -> list[float]:
        """What each rollout's end ``state`` is worth to ``seat`` (:func:`outcome`)."""
        return [outcome(state, side, before, self.win, self.leaf, self.dleaf)
                for state in states]

    def rollout_means(self, view: SeatView, moves: list[int], worlds: int) -> list[float]:
        """Each move's weighted mean rollout outcome (:meth:`rollout_totals`), in points."""
        totals, weight_sum = self.rollout_totals(view, moves, worlds)
        return [t / weight_sum for t in totals]

    def world_sampler(self, view: SeatView) -> Worlds:
        """Where the worlds come from: the seat's own view (:class:`WorldSampler`)."""
        return WorldSampler(view, self.rng)

    def world_weight(self, view: SeatView, world: GameState) -> float:
        """How much a sampled world counts: 1 (every world alike)."""
        return 1.0

    def play_out(self, state: GameState, rnd: random.Random, seat: int) -> None:
        """One rollout from ``state`` (:func:`rollout`)."""
        rollout(state, rnd, self.eps, seat, self.depth, self.defend)
