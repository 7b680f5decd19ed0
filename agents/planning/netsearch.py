"""``search:net=<checkpoint>``: determinized search guided by a trained policy network.

The agent is :class:`allfives_agents.planning.search.SearchAgent` plus a checkpoint's policy
(anything
``ckpt:`` loads, e.g. ``checkpoints/ppo_all_fives_2p``; ``net=best``: the shipped model for
the rules of the game in play, found at its first move as ``ckpt:best`` is; the level
``strongest`` plays ``search:net=best,batched=1`` where measured), evaluated only on what the
seat may know: its own observation and :class:`SeatView`, or its own view of a sampled world. The
network and the seat's memory enter through options of the id (0: off):

* ``prior`` (lambda, points per nat): each candidate's rollout mean gets
  ``prior * log pi(a | view)`` added, the network's log-probability over the legal moves;
* ``topk``: only the network's ``topk`` most likely legal moves are searched, so the
  ``sims`` rollouts are spread over fewer candidates;
* ``rollnet``: inside the rollouts the searching seat plays the network's move from its own
  view of the world (not ``search``'s fast policy, which sees the other hands), cached per
  view within a decision;
* ``oppview``: inside the rollouts every other seat plays ``heuristic``'s move from its own
  view of the world (not ``search``'s fast policy, which sees the searching seat's hand);
* ``value`` (weight): a rollout that ends before the game does is worth the checkpoint's
  learned value of the rest of the game (its critic, :meth:`NumpyPolicy.value`, from the
  searching seat's own observation of the world there; at the end of a hand, of the next
  hand's deal) times ``value``, plus the points so far and the game's end, instead of
  ``leaf`` and ``dleaf``; all in points, the value's units converted by its checkpoint's card
  (``margin_reward`` per ``target`` points of margin, ``win_reward`` for a game: a game is
  worth ``win_reward / margin_reward x target`` points); with ``depth=1`` the search looks
  one turn of the seat ahead and asks the network from there;
* ``infer`` (beta): each sampled world is weighted by how well it explains the other seat's
  plays this hand (:class:`allfives_agents.rulebased.opponent_model.PlayMemory`, 2 seats).

Every other ``search`` option keeps its meaning. :data:`NET_DEFAULTS` are this variant's
defaults, chosen by the duplicate matches in docs/netsearch.md: ``sims=256``, ``depth=2``,
``rollnet=1`` and ``oppview=1`` (the rest off). With ``rollnet``, ``prior``, ``topk``,
``infer`` and ``oppview`` all 0 the moves are exactly ``search``'s with the same ``sims`` and
``depth``. A play that reaches the target under ``win_check: immediate`` is still taken at
once; ties go to the lowest action id, so the agent is deterministic for a seed.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from allfives_agents.base import Agent, Obs, register
from allfives_agents.features.action_features import policy_input
from allfives_agents.options import finite_number
from allfives_agents.planning.search import (
    DEFAULTS,
    SearchAgent,
    rollout,
)
from allfives_agents.rulebased.heuristic import HeuristicAgent
from allfives_agents.rulebased.opponent_model import PlayMemory
from allfives_agents.trained.checkpoint import CheckpointAgent
from allfives_env.game.engine import GameState
from allfives_env.game.match import NO_OBS
from allfives_env.game.observation import observe
from allfives_env.game.view import SeatView

#: This variant's defaults: the ``search`` options it changes, and its own. Its own options add
#: no work beyond a constant factor per rollout; ``sims``, ``min_worlds`` and ``depth`` have
#: ``search``'s bounds (:data:`allfives_agents.planning.search.BOUNDS`).
NET_DEFAULTS: dict[str, float] = {"sims": 256, "depth": 2, "rollnet": 1, "prior": 0.0,
                                  "topk": 0, "infer": 0.0, "oppview": 1, "batched": 0,
                                  "value": 0.0}


class NetSearchAgent(SearchAgent):
    """``search`` with a policy network in its rollouts, as prior or as move filter, and a
    memory of the other seat's plays (see the module)."""

    needs_obs = True

    def __init__(self, seed: int | None = None, net: Any = None, **options: Any) -> None:
        if not isinstance(net, str) or not net.strip():
            raise ValueError(f"search: net={net!r} must name a checkpoint, e.g. "
                             "search:net=checkpoints/ppo_all_fives_2p")
        own = {k: options.pop(k, v) for k, v in NET_DEFAULTS.items() if k not in DEFAULTS}
        for key in ("prior", "topk", "infer", "rollnet", "oppview", "batched", "value"):
            value = finite_number(own[key])
            if value is None or value < 0:
                raise ValueError(f"search: option {key}={repr(own[key])[:40]} must be a number "
                                 ">= 0 (finite)")
        self.prior, self.topk = float(own["prior"]), int(own["topk"])
        self.infer, self.memory = float(own["infer"]), PlayMemory()
        self.rollnet, self.oppview = bool(own["rollnet"]), bool(own["oppview"])
        self.batched, self.value = bool(own["batched"]), float(own["value"])
        self._heuristic = HeuristicAgent()
        self._cache: dict[tuple, int] = {}  # rollnet: the seat's own moves, per view
        merged = {k: v for k, v in NET_DEFAULTS.items() if k in DEFAULTS}
        merged.update(options)
        super().__init__(seed, **merged)
        self._ref = net.strip()
        self.net = CheckpointAgent(self._ref)  # one-line ValueError: bad or missing checkpoint
        self._units = (1.0, 1.0)  # the value's units (see the module), from the card
        self._seed: int | None = seed
        self._lockstep: Any = None  # batched=1: (NetRollouts, SlotStreams), at its first move
        if self.batched:  # numba and the options checked now, the search built when it plays
            from allfives_agents.batched.netsearch import check_batched

            check_batched(self)
        if self.net.directory is not None:  # net=best: at the first move, from the rules
            self._bind()

    def _bind(self) -> None:
        """The checks and figures that need the network: at construction, or with
        ``net=best`` (the shipped model for the game's rules) at the first move."""
        if self.value and not (self.net.policy and self.net.policy.has_value):
            name = getattr(self.net.directory, "name", "")
            raise ValueError(f"search: value={self.value:g} needs a checkpoint that carries its "
                             f"value network; {self._ref!r} ({name}) has none (every shipped "
                             "model does; train one with ppo_batched, dmc or search_distill "
                             "with a valued teacher)")
        config = self.net.card.get("config") or {}
        self._units = (float(config.get("margin_reward", 1.0)),
                       float(config.get("win_reward", 1.0)))
        if self.batched:
            from allfives_agents.batched.netsearch import check_memory

            check_memory(self.sims, self.min_worlds, self.net.policy)

    def _batched_search(self) -> Any:
        """``batched=1``: the batched search of agents/batched/netsearch.py on a one-game
        state built from the seat's view (allfives_env/batched_engine/view.py), built at its first
        decision (the batched ``search`` bot, which makes this agent for its checks, never
        builds it)."""
        if self._lockstep is None:
            from allfives_agents.batched.netsearch import OPTION_ORDER, net_rollouts
            from allfives_agents.planning.slot_streams import SlotStreams

            opts = np.array([float(getattr(self, key)) for key in OPTION_ORDER])
            self._lockstep = net_rollouts(self, opts), SlotStreams(self._seed)
        return self._lockstep

    def _check(self, view: SeatView) -> None:
        if self.net.directory is None:  # net=best
            self.net.load_for(view.rules)
            self._bind()
        if view.rules.key not in self.net._checked:
            self.net.check_rules(view.rules)  # refuse another table, warn about other rules

    def log_policy(self, obs: Obs, view: SeatView) -> np.ndarray:
        """The network's log-probabilities of the legal moves, in ``view.legal`` order."""
        if "observation" not in obs:
            raise ValueError(f"{self.name}: needs the observation vector")
        policy = self.net.policy
        assert policy is not None  # a checkpoint agent always holds its network
        z = policy.logits(policy_input(policy, obs["observation"], view))
        z = np.asarray(z, np.float64)[list(view.legal)]
        z -= z.max()
        return z - np.log(np.exp(z).sum())

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.memory.reset()

    def act(self, obs: Obs, view: SeatView) -> int:
        self._check(view)
        if self.infer:
            self.memory.see(view)
        action = self._choose(obs, view)
        if self.infer:
            self.memory.chose(view, action)
        return action

    def _choose(self, obs: Obs, view: SeatView) -> int:
        quick = self.obvious(view)
        if quick is not None:
            return quick
        legal = view.legal
        if self.batched:
            from allfives_env.batched_engine.view import games_from_view

            rollouts, streams = self._batched_search()
            games = games_from_view(view)
            best = np.empty(1, dtype=np.int64)
            rollouts.values(games, np.zeros(1, np.int64), streams.of(games), best,
                            np.empty((1, 140)))
            return int(best[0])
        if not (self.prior or self.topk):
            return self._search(view, legal, list(range(len(legal))), np.zeros(len(legal)))
        logp = self.log_policy(obs, view)
        order = sorted(range(len(legal)), key=lambda k: (-logp[k], legal[k]))
        keep = sorted(order[:self.topk] if self.topk else order)
        return self._search(view, legal, keep, logp)

    def _search(self, view: SeatView, legal: tuple[int, ...], keep: list[int],
                logp: np.ndarray) -> int:
        """The best of ``legal[k] for k in keep`` by rollout mean + ``prior`` x ``logp[k]``."""
        if len(keep) == 1:
            return legal[keep[0]]
        moves = [legal[k] for k in keep]
        means = self.rollout_means(view, moves, max(self.min_worlds, self.sims // len(moves)))
        scores = [m + self.prior * logp[k] for m, k in zip(means, keep)]
        best = max(range(len(moves)), key=lambda i: (scores[i], -moves[i]))
        return moves[best]

    def rollout_means(self, view: SeatView, moves: list[int], worlds: int) -> list[float]:
        """Each move's rollout outcome averaged over ``worlds`` sampled worlds (the same
        worlds for every move), each world weighted by :class:`PlayMemory` when ``infer``."""
        self._cache = {}  # the seat's own moves, per view, this decision
        return super().rollout_means(view, moves, worlds)

    def world_weight(self, view: SeatView, world: GameState) -> float:
        if not (self.infer and self.memory.plays):
            return 1.0
        other = (view.seat + 1) % view.n
        log_w = self.memory.log_weight(world.hands[other], self.infer)
        return math.exp(max(log_w, -600.0))  # never all zero

    def outcomes(self, states: list[GameState], side: int, before: list[int], seat: int
                 ) -> list[float]:
        """With ``value``: the points since the decision and the game's end, plus ``value`` x
        the network's value of the rest where the game goes on, all in points (see the
        module)."""
        if not self.value:
            return super().outcomes(states, side, before, seat)
        policy = self.net.policy
        assert policy is not None
        per = self.points_per_unit(states[0].rules.target)
        win = self._units[1] * per
        values, rows, where = [], [], []
        for k, state in enumerate(states):
            gains = [state.scores[i] - before[i] for i in range(len(before))]
            others = [g for i, g in enumerate(gains) if i != side]
            values.append(gains[side] - sum(others) / len(others))
            if state.game_over:
                values[k] += 0.0 if state.winner is None else (win if state.winner == side
                                                                else -win)
                continue
            if state.hand_over:
                state.next_hand()
            rows.append(observe(state, seat))
            where.append(k)
        if rows:
            for k, v in zip(where, policy.value(np.stack(rows))):
                values[k] += self.value * float(v) * per
        return values

    def value_units(self, rules: Any) -> tuple[float, float]:
        """The learned value's units, (``margin_reward``, ``win_reward``) from the network's
        card; with ``net=best`` the shipped model for ``rules`` is found first."""
        if self.net.directory is None:
            self.net.load_for(rules)
            self._bind()
        return self._units

    def points_per_unit(self, target: int) -> float:
        """Points per unit of the network's value: ``target`` / its ``margin_reward``."""
        return target / self._units[0]

    def play_out(self, state: GameState, rnd: random.Random, seat: int) -> None:
        if self.rollnet or self.oppview:
            self.net_rollout(state, seat, self._cache, rnd)
        else:
            super().play_out(state, rnd, seat)

    def net_rollout(self, state: GameState, seat: int, cache: dict[tuple, int],
                    rnd: random.Random | None = None) -> None:
        """:func:`allfives_agents.planning.search.rollout` in which ``seat`` plays the network's
        move from
        its own view of the world (no hidden tile), cached per view within a decision, with
        ``rollnet``; the other seats play ``heuristic`` from their own views with
        ``oppview``, else as there (``defend``, and ``eps`` when ``rnd`` is given)."""
        eps = self.eps if rnd is not None else 0.0
        own = (lambda st, legal: self._own_move(st, seat, legal, cache)) if self.rollnet \
            else None
        rollout(state, rnd or random.Random(0), eps, seat, self.depth, self.defend, own=own,
                others=self._other_move if self.oppview else None)

    def _other_move(self, state: GameState, legal: list[int]) -> int:
        """``heuristic``'s move for the seat to act, from its own view of the world."""
        return self._heuristic.act(NO_OBS, SeatView.of(state, state.current))

    def _own_move(self, state: GameState, seat: int, legal: list[int],
                  cache: dict[tuple, int]) -> int:
        key = (state.hands[seat], tuple(state.ends), tuple(state.dbl), tuple(state.cnt),
               state.n_arms, tuple(state.lacks), tuple(h.bit_count() for h in state.hands),
               state.bone_pos, tuple(state.scores), tuple(state.played_by))
        action = cache.get(key)
        if action is None:
            view = SeatView.of(state, seat)
            obs = observe(state, seat, legal)
            policy = self.net.policy
            assert policy is not None
            z = policy.logits(policy_input(policy, obs, view))
            action = max(legal, key=lambda a: (z[a], -a))
            cache[key] = action
        return action


@register("search", batched="allfives_agents.batched.bots:BatchedSearch")
def make_search(seed: int | None = None, **options: Any) -> Agent:
    """``search``; with a ``net=<checkpoint>`` option, the network-guided variant
    (:class:`NetSearchAgent`). Registered here, where both variants are known, so that
    :mod:`allfives_agents.planning.search` imports neither this module nor the registry's choice."""
    if "net" in options:
        return NetSearchAgent(seed=seed, **options)
    return SearchAgent(seed=seed, **options)


def warm_up(agent_id: str = "search:net=best,batched=1,sims=16", seed: int = 0) -> Agent:
    """Compile the batched search with a network (numba caches it per installation; about a
    minute of one core the first time) by playing a 2-seat game with it until it has searched
    once. ``allfives serve`` runs this in a background thread at start, so that the first
    game against the level ``strongest`` does not wait for the compilation. Returns the
    agent."""
    from allfives_agents.base import make_agent
    from allfives_env.game.match import decide, new_game
    from allfives_env.game.rules import make_rules

    agent = make_agent(agent_id, seed)
    state = new_game(make_rules("all_fives"), seed, log=False)
    while not state.game_over and getattr(agent, "_lockstep", None) is None:
        if state.hand_over:
            state.next_hand()
        else:
            state.apply(decide(agent, state))
    return agent
