"""The batched ``search:net=<checkpoint>``
(:class:`allfives_agents.planning.netsearch.NetSearchAgent`).

For the seat to act of many games at once: sample each game's worlds from that seat's view
(:func:`allfives_agents.batched.search.deal_world`), play every move in each world on a scratch game
(one per world and move, all games' scratch games in one batch), then roll all of them out in
lock step, one move each per step: the searching seat plays the network's best move from its
own view of the world (``rollnet``: the batched observation and per-action features, one
numpy forward pass over every scratch game where it is to play), every other seat plays
``heuristic``'s move from its own view (``oppview``: the batched heuristic), and a seat that
neither covers plays ``search``'s fast policy (``defend``, ``eps`` from a stream per world as
the scalar rollout's). A rollout stops where the scalar one does: at the end of the hand or
game, or when the searching seat is about to play for the ``depth + 1``-th time. Each
move's mean outcome (:func:`allfives_agents.batched.search.outcome`) is its value; the best
wins, ties to the lowest action id; a single legal move or a play that wins now is taken unsearched.

With ``value`` (the learned value at the leaves,
:class:`allfives_agents.planning.netsearch.NetSearchAgent`):
each scratch game is worth the points since the decision and the game's end, plus ``value``
x the network's value of the rest (converted to points as the scalar agent does) from the
searching seat's own observation where the game goes on (:func:`value_leaves`; a finished
hand first deals the next from the world's stream, as the scalar agent deals it from its
own), one forward pass of the critic per :data:`NET_CHUNK` leaves.

The rollouts are deterministic given the world (``eps`` 0, the defaults), so where the world is
known the values are the scalar agent's (``tests/test_batched_netsearch.py``; with ``value``,
where the next hand's deal plays no part). ``prior``, ``topk`` and ``infer`` have no batched
version.

Memory is bounded (:func:`check_memory`, docs/faults.md): the scratch games take
:data:`SCRATCH_BYTES` each, ``max(sims, min_worlds x MAX_CANDIDATES)`` of them for a
decision, and the network reads them :data:`NET_CHUNK` at a time; options whose estimate is
over :data:`MEMORY_BUDGET` are refused when the agent is made, and a position with more
candidate moves than :data:`MAX_CANDIDATES` searches proportionally fewer worlds per move.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from allfives_agents.batched.bot_kernels import heuristic_actions, heuristic_weights
from allfives_agents.batched.features import features, live_bits
from allfives_agents.batched.search import (
    O_DEFEND,
    O_DEPTH,
    O_DLEAF,
    O_EPS,
    O_LEAF,
    O_MIN_WORLDS,
    O_SIMS,
    O_WIN,
    OPTION_ORDER,
    deal_world,
    outcome,
    rollout_choice,
    winning_play,
)
from allfives_agents.planning.deadline import ROUND_GAMES, has_deadline, out_of_time
from allfives_env.batched_engine import layout as L
from allfives_env.batched_engine.kernels import (
    apply,
    observe,
    observe_mask,
    shuffle_deal,
    side_of,
    sorted_legal,
    splitmix,
    start_hand,
    templates,
    uniform,
)

#: The most memory one batched decision may take (bytes), and how it is reckoned: a scratch
#: game's state and bookkeeping, the candidate moves assumed when checking the options, and
#: the scratch games the network reads per forward pass.
MEMORY_BUDGET = 64 * 2**20
SCRATCH_BYTES = 512
MAX_CANDIDATES = 16
NET_CHUNK = 256

#: what a scratch game does next (:func:`classify`)
DONE, GIVEN, OWN, OTHER = 0, 1, 2, 3


@njit(cache=True)
def prepare(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray, moves: np.ndarray,
            counts: np.ndarray, best: np.ndarray) -> None:
    """Per game of ``idx``: its legal moves in ``moves[j]`` and ``counts[j]`` of them to
    search, or 0 where the move is taken unsearched (``best[j]``)."""
    for j in range(idx.shape[0]):
        b = idx[j]
        n = sorted_legal(G, A, b, moves[j])
        best[j] = moves[j, 0]
        counts[j] = n
        if n > 1:
            found = winning_play(b, R, G, A, moves[j], n, side_of(R, G[b, L.F_CUR]))
            if found >= 0:
                best[j], counts[j] = found, 0
        else:
            counts[j] = 0


@njit(cache=True)
def deal(idx: np.ndarray, R: np.ndarray, G: np.ndarray, A: np.ndarray, T: np.ndarray,
         rng: np.ndarray, moves: np.ndarray, counts: np.ndarray, worlds: np.ndarray,
         SG: np.ndarray, SA: np.ndarray, ST: np.ndarray, owner: np.ndarray,
         streams: np.ndarray) -> None:
    """Fill the scratch games: for each game j, ``worlds[j]`` worlds, each with each of its
    ``counts[j]`` moves played; ``owner[s]``: (game j, move k, searching seat); the eps stream
    of every move of a world starts alike."""
    W = np.zeros((2, G.shape[1]), dtype=G.dtype)
    AW = np.zeros((2, A.shape[1], A.shape[2]), dtype=A.dtype)
    TW = np.zeros((2, T.shape[1], T.shape[2]), dtype=T.dtype)
    EV = np.zeros((1, 1, 4), dtype=np.int16)
    EVP = np.zeros((1, 1), dtype=np.int16)
    pool = np.empty(28, dtype=np.int64)
    s = 0
    for j in range(idx.shape[0]):
        b = idx[j]
        for _ in range(worlds[j]):
            deal_world(b, R, G, A, T, rng, W, AW, TW, pool)
            seed = splitmix(rng, b)
            for k in range(counts[j]):
                SG[s] = W[0]
                SA[s] = AW[0]
                ST[s] = TW[0]
                apply(s, moves[j, k], R, SG, SA, ST, EV, EVP, EV, EVP)
                owner[s, 0], owner[s, 1], owner[s, 2] = j, k, G[b, L.F_CUR]
                streams[s] = seed
                s += 1


@njit(cache=True)
def classify(slots: np.ndarray, R: np.ndarray, SG: np.ndarray, SA: np.ndarray,
             owner: np.ndarray, turns: np.ndarray, opts: np.ndarray, rollnet: bool,
             oppview: bool, streams: np.ndarray, kind: np.ndarray, acts: np.ndarray) -> None:
    """What each scratch game in ``slots`` does next (``search.rollout``'s loop, one turn):
    ``DONE``; ``GIVEN`` (the move in ``acts``: the only legal one, or the fast policy's);
    ``OWN`` (the network's); ``OTHER`` (heuristic's)."""
    depth, eps, defend = int(opts[O_DEPTH]), opts[O_EPS], opts[O_DEFEND]
    legal = np.empty(140, dtype=np.int64)
    lay = np.zeros((4, 28), dtype=np.int64)
    scratch = np.empty(28, dtype=np.int64)
    for i in range(slots.shape[0]):
        s = slots[i]
        kind[i] = DONE
        if SG[s, L.F_HAND_OVER]:
            continue
        current, seat = SG[s, L.F_CUR], owner[s, 2]
        if depth and current == seat:
            turns[s] += 1
            if turns[s] > depth:
                continue
        n = sorted_legal(SG, SA, s, legal)
        kind[i] = GIVEN
        if n == 1:
            acts[i] = legal[0]
        elif rollnet and current == seat:
            kind[i] = OWN
        elif oppview and current != seat:
            kind[i] = OTHER
        elif eps and uniform(streams, s) < eps:
            acts[i] = legal[int(uniform(streams, s) * n)]
        else:
            acts[i] = rollout_choice(R, SG, SA, legal, n, defend, lay, scratch, s)


@njit(cache=True)
def apply_all(slots: np.ndarray, acts: np.ndarray, R: np.ndarray, SG: np.ndarray,
              SA: np.ndarray, ST: np.ndarray) -> None:
    EV = np.zeros((1, 1, 4), dtype=np.int16)
    EVP = np.zeros((1, 1), dtype=np.int16)
    for i in range(slots.shape[0]):
        apply(slots[i], acts[i], R, SG, SA, ST, EV, EVP, EV, EVP)


@njit(cache=True)
def score(idx: np.ndarray, R: np.ndarray, A: np.ndarray, SG: np.ndarray, SA: np.ndarray,
          owner: np.ndarray, opts: np.ndarray, totals: np.ndarray) -> None:
    """``totals[j, k]``: the outcomes of move k of game j summed over its worlds."""
    win, leaf, dleaf = opts[O_WIN], opts[O_LEAF], opts[O_DLEAF]
    before = np.zeros(4, dtype=np.float64)
    for s in range(owner.shape[0]):
        j, k, seat = owner[s, 0], owner[s, 1], owner[s, 2]
        b = idx[j]
        for i in range(4):
            before[i] = A[b, L.R_SCORES, i]
        totals[j, k] += outcome(R, SG, SA, side_of(R, seat), before, win, leaf, dleaf, s)


@njit(cache=True)
def value_leaves(idx: np.ndarray, R: np.ndarray, A: np.ndarray, SG: np.ndarray,
                 SA: np.ndarray, ST: np.ndarray, owner: np.ndarray, win: float,
                 streams: np.ndarray, base: np.ndarray, open_: np.ndarray) -> None:
    """With ``value``: ``base[s]``, scratch game s's points since the decision (its side's
    gain less the mean of the others') and its game's end (``win`` points);
    ``open_[s]`` where the game goes on and the value of the rest is still to add, a finished
    hand's next deal made from the stream ``streams[s]`` (``NetSearchAgent.outcomes``)."""
    sides = R[L.K_SIDES]
    for s in range(owner.shape[0]):
        b, side = idx[owner[s, 0]], side_of(R, owner[s, 2])
        others = 0
        for i in range(sides):
            if i != side:
                others += SA[s, L.R_SCORES, i] - A[b, L.R_SCORES, i]
        mine = SA[s, L.R_SCORES, side] - A[b, L.R_SCORES, side]
        base[s] = mine - others / (sides - 1)
        open_[s] = not SG[s, L.F_GAME_OVER]
        if SG[s, L.F_GAME_OVER]:
            if SG[s, L.F_WINNER] >= 0:
                base[s] += win if SG[s, L.F_WINNER] == side else -win
        elif SG[s, L.F_HAND_OVER]:
            SG[s, L.F_HAND_IDX] += 1
            shuffle_deal(ST, streams, s)
            SG[s, L.F_EXT_LEADER] = -1
            start_hand(s, R, SG, SA, ST, streams)


class NetRollouts:
    """The batched ``search:net=...`` search of :func:`search_values`'s games (module
    docstring); ``policy``: the network (a ``NumpyPolicy``), ``opts``: ``search``'s options
    in :data:`OPTION_ORDER`, ``weights``: heuristic's."""

    def __init__(self, policy: Any, opts: np.ndarray, rollnet: bool, oppview: bool,
                 weights: np.ndarray, value: float = 0.0,
                 units: tuple[float, float] = (1.0, 1.0)) -> None:
        self.policy, self.opts, self.weights = policy, opts, weights
        self.rollnet, self.oppview = rollnet, oppview
        # value: the learned value's weight at the leaves (0: outcome's points); units: its
        # margin_reward and win_reward (the checkpoint's card)
        self.value, self.units = float(value), units
        check_view(policy)
        self.k = int(getattr(policy, "n_features", 0)) if getattr(
            policy, "needs_features", False) else 0

    def values(self, games: Any, idx: np.ndarray, rng: np.ndarray, out: np.ndarray,
               values: np.ndarray) -> None:
        """The chosen move of the seat to act of each game in ``idx`` into ``out``, and each
        searched move's mean outcome at its action id in ``values`` (``[len(idx), 140]``;
        rows of unsearched moves are left as they were)."""
        R = games.scratch_rules()  # rollouts keep no record
        m = len(idx)
        moves = np.empty((m, 140), dtype=np.int64)
        counts = np.zeros(m, dtype=np.int64)
        prepare(idx, R, games.G, games.A, moves, counts, out)
        sims, min_worlds = int(self.opts[O_SIMS]), int(self.opts[O_MIN_WORLDS])
        worlds = np.where(counts > 0, np.maximum(min_worlds, sims // np.maximum(counts, 1)), 0)
        worlds = within_budget(worlds, counts, scratch_limit(self.policy))
        if int((worlds * counts).sum()) == 0:
            return
        totals = np.zeros((m, 140), dtype=np.float64)
        done = self._rounds(idx, R, games, rng, moves, counts, worlds, totals)
        for j in np.flatnonzero(counts):
            n = counts[j]
            means = totals[j, :n] / done[j]
            values[j, moves[j, :n]] = means
            out[j] = moves[j, int(np.argmax(means))]  # the first best: the lowest action id

    def _rounds(self, idx: np.ndarray, R: np.ndarray, games: Any, rng: np.ndarray,
                moves: np.ndarray, counts: np.ndarray, worlds: np.ndarray,
                totals: np.ndarray) -> np.ndarray:
        """Deal, roll out and score ``worlds[j]`` worlds of every move of game j into
        ``totals``; the worlds each game got. Without a move deadline, in one go; under one
        (:mod:`allfives_agents.planning.deadline`), in rounds of at most
        :data:`~allfives_agents.planning.deadline.ROUND_GAMES` scratch games (the same worlds, dealt
        from the same streams in the same order), stopping after the round in progress when
        the deadline passes."""
        left = worlds.copy()
        done = np.zeros_like(worlds)
        per_world = max(1, int(counts.sum()))
        step = max(1, ROUND_GAMES // per_world) if has_deadline() else int(left.max())
        while left.max() > 0:
            this = np.minimum(left, step)
            self._round(idx, R, games, rng, moves, counts, this, totals)
            done += this
            left -= this
            if out_of_time():
                break
        return np.maximum(done, 1)

    def _round(self, idx: np.ndarray, R: np.ndarray, games: Any, rng: np.ndarray,
               moves: np.ndarray, counts: np.ndarray, worlds: np.ndarray,
               totals: np.ndarray) -> None:
        """One round: ``worlds[j]`` worlds of game j, their outcomes added to ``totals``."""
        total = int((worlds * counts).sum())
        if total == 0:
            return
        SG = np.empty((total, games.G.shape[1]), dtype=games.G.dtype)
        SA = np.empty((total, *games.A.shape[1:]), dtype=games.A.dtype)
        ST = np.empty((total, *games.T.shape[1:]), dtype=games.T.dtype)
        owner = np.empty((total, 3), dtype=np.int64)
        streams = np.empty(total, dtype=np.uint64)
        deal(idx, R, games.G, games.A, games.T, rng, moves, counts, worlds, SG, SA, ST, owner,
             streams)
        self._roll(R, SG, SA, ST, owner, streams, games.rules.players)
        if self.value:
            leaves = self._valued(idx, R, games, SG, SA, ST, owner, streams)
            np.add.at(totals, (owner[:, 0], owner[:, 1]), leaves)
        else:
            score(idx, R, games.A, SG, SA, owner, self.opts, totals)

    def _valued(self, idx: np.ndarray, R: np.ndarray, games: Any, SG: np.ndarray,
                SA: np.ndarray, ST: np.ndarray, owner: np.ndarray, streams: np.ndarray
                ) -> np.ndarray:
        """Each scratch game's worth with the learned value (:func:`value_leaves`)."""
        base = np.empty(len(SG), dtype=np.float64)
        open_ = np.empty(len(SG), dtype=np.bool_)
        per = games.rules.target / self.units[0]  # points per unit of the value
        value_leaves(idx, R, games.A, SG, SA, ST, owner, self.units[1] * per, streams, base,
                     open_)
        rows = np.flatnonzero(open_)
        tmpl = templates(R)
        for i in range(0, len(rows), NET_CHUNK):
            chunk = rows[i:i + NET_CHUNK]
            obs = np.empty((len(chunk), tmpl.shape[1]), dtype=np.float32)
            observe(chunk, owner[chunk, 2].copy(), R, SG, SA, ST, tmpl, obs)
            base[chunk] += self.value * np.asarray(self.policy.value(obs), np.float64) * per
        return base

    def _roll(self, R: np.ndarray, SG: np.ndarray, SA: np.ndarray, ST: np.ndarray,
              owner: np.ndarray, streams: np.ndarray, players: int) -> None:
        """Every scratch game's rollout, in lock step."""
        tmpl = templates(R)
        live = live_bits(self.k, players) if self.k else None
        turns = np.zeros(len(SG), dtype=np.int64)
        slots = np.arange(len(SG), dtype=np.int64)
        while len(slots):
            kind = np.empty(len(slots), dtype=np.int64)
            acts = np.zeros(len(slots), dtype=np.int64)
            classify(slots, R, SG, SA, owner, turns, self.opts, self.rollnet, self.oppview,
                     streams, kind, acts)
            own = np.flatnonzero(kind == OWN)
            if len(own):
                acts[own] = self._network(R, SG, SA, ST, tmpl, live, slots[own])
            other = np.flatnonzero(kind == OTHER)
            if len(other):
                picked = np.empty(len(other), dtype=np.int64)
                heuristic_actions(slots[other], R, SG, SA, ST, self.weights, picked)
                acts[other] = picked
            go = kind != DONE
            slots, acts = slots[go], acts[go]
            apply_all(slots, acts, R, SG, SA, ST)

    def _network(self, R: np.ndarray, SG: np.ndarray, SA: np.ndarray, ST: np.ndarray,
                 tmpl: np.ndarray, live: np.ndarray | None, idx: np.ndarray) -> np.ndarray:
        """The network's best legal move in scratch games ``idx``, :data:`NET_CHUNK` games
        per forward pass (the inputs of all of them at once could take gigabytes)."""
        return np.concatenate([self._forward(R, SG, SA, ST, tmpl, live, idx[i:i + NET_CHUNK])
                               for i in range(0, len(idx), NET_CHUNK)])

    def _forward(self, R: np.ndarray, SG: np.ndarray, SA: np.ndarray, ST: np.ndarray,
                 tmpl: np.ndarray, live: np.ndarray | None, idx: np.ndarray) -> np.ndarray:
        """The network's best legal move (ties: the lowest id) in scratch games ``idx``."""
        obs = np.empty((len(idx), tmpl.shape[1]), dtype=np.float32)
        mask = np.empty((len(idx), 140), dtype=np.bool_)
        observe_mask(idx, R, SG, SA, ST, tmpl, obs, mask)
        if live is not None:
            feats = np.empty((len(idx), 140, self.k), dtype=np.float32)
            features(idx, R, SG, SA, ST, live, feats)
            obs = np.concatenate([obs, feats.reshape(len(idx), -1)], axis=1)
        z = np.asarray(self.policy.logits(obs), dtype=np.float32)
        z[~mask] = -np.inf
        return z.argmax(axis=1).astype(np.int64)



def network_bytes(policy: Any) -> int:
    """The memory of one forward pass over :data:`NET_CHUNK` scratch games: the input (the
    observation, the per-action features and their concatenation), the hidden layers and the
    logits and mask, in bytes."""
    size = int(getattr(policy, "obs_size", 0))
    widths = sum(int(w.shape[1]) for w, _ in getattr(policy, "layers", ()))
    return NET_CHUNK * (4 * (3 * size + 2 * widths) + 5 * 140)


def scratch_limit(policy: Any) -> int:
    """The most scratch games one decision may hold within :data:`MEMORY_BUDGET`."""
    return max(1, (MEMORY_BUDGET - network_bytes(policy)) // SCRATCH_BYTES)


def within_budget(worlds: np.ndarray, counts: np.ndarray, limit: int) -> np.ndarray:
    """``worlds`` scaled down (at least one per searched game) where ``worlds x counts``
    scratch games would pass ``limit``: a position with very many candidate moves."""
    total = int((worlds * counts).sum())
    if total <= limit:
        return worlds
    return np.where(worlds > 0, np.maximum(1, worlds * limit // total), 0)


def check_memory(sims: int, min_worlds: int, policy: Any) -> None:
    """ValueError, in one line, when ``sims`` and ``min_worlds`` would take more than
    :data:`MEMORY_BUDGET` (``max(sims, min_worlds x MAX_CANDIDATES)`` scratch games of
    :data:`SCRATCH_BYTES`, plus one forward pass of the network)."""
    check_view(policy)
    games = max(sims, min_worlds * MAX_CANDIDATES)
    need = games * SCRATCH_BYTES + network_bytes(policy)
    if need > MEMORY_BUDGET:
        most = scratch_limit(policy) // MAX_CANDIDATES
        raise ValueError(f"search:net=...,batched=1 with sims={sims}, min_worlds={min_worlds} "
                         f"needs about {need / 2**20:.0f} MiB, over its {MEMORY_BUDGET // 2**20} "
                         f"MiB budget: keep max(sims, min_worlds x {MAX_CANDIDATES}) <= "
                         f"{scratch_limit(policy)} (min_worlds <= {most})")


def check_view(policy: Any) -> None:
    """ValueError, in one line, for a network over an action view (its rows are not computed
    in the scratch games)."""
    view = getattr(policy, "action_view", None)
    if view:
        raise ValueError(f"search:net=...,batched=1: this network reads the action view "
                         f"{view!r}, which the batched search does not compute; play it with "
                         "batched=0")


def check_batched(agent: Any) -> None:
    """ValueError, in one line, when a scalar ``search:net=...`` agent uses an option that
    has no batched version."""
    used = [k for k in ("prior", "topk", "infer") if getattr(agent, k)]
    if used:
        raise ValueError(f"search:net=... with {', '.join(used)} has no batched version "
                         "(rollnet, oppview, value and search's options have)")


def net_rollouts(agent: Any, opts: np.ndarray) -> NetRollouts:
    """:class:`NetRollouts` for a scalar ``search:net=...`` agent (its network, ``rollnet``,
    ``oppview``, ``value`` and its units; ``heuristic``'s default weights for the other
    seats); ValueError for the options it lacks."""
    from allfives_agents.rulebased.heuristic import DEFAULTS

    check_batched(agent)
    return NetRollouts(agent.net.policy, opts, agent.rollnet, agent.oppview,
                       heuristic_weights(DEFAULTS), agent.value, agent._units)


__all__ = ["MEMORY_BUDGET", "NetRollouts", "OPTION_ORDER", "check_batched", "check_memory",
           "net_rollouts"]
