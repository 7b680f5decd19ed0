"""The batched engine: B independent games of All Fives stepped in one call.

The same game as :class:`allfives_env.game.engine.GameState` (a differential test drives both with
the same deals and actions), held as structure-of-arrays numpy state and stepped by numba
kernels (:mod:`allfives_env.batched_engine.kernels`; install with ``pip install
'allfives[fast]'``)::

    games = BatchedGames(make_rules("five_up", players=3), batch=4096, seed=0)
    games.reset()
    obs, mask = games.observe(), games.legal_mask()      # [B, 386] float32, [B, 140] bool
    result = games.step(actions)                          # one action per game (-1: skip)

Every public method checks what it is given before it reaches compiled code: ``step`` takes an
integer array of shape ``(B,)`` (any numpy integer width, or a list of ints) whose entries are
``-1`` or a legal action of the game's seat to act; anything else (floats, bools, strings,
objects, another shape, a value outside ``-1..139``, an action the mask forbids, an action for a
game with no hand in play) raises one ``ValueError`` line naming the first bad game, and the
games are left as they were. :meth:`BatchedGames.step_unchecked` skips only the legality
check, for actions that come straight from a masked sampler (``random_actions``, the batched
bots): dtype, shape and range are still checked, but an illegal action corrupts the games
(and games corrupted long enough can break anything). :meth:`BatchedGames.check` verifies every
game's invariants (the 28 tiles split among the hands, the line and the boneyard, scores in
steps of 5, a legal move for the seat to act).

After every step each game that is still in play has a seat to act (forced draws, passes and
the next hand's deal happen inside the step). With ``autoreset`` (the default) a finished game
is replaced at once by a new one; :class:`StepResult` describes the finished game.

Seeds: ``seed`` (an int >= 0, or ``None``: from the OS) starts one splitmix64 stream; each
new game takes its own stream's seed from it, so a run is reproducible for a given ``seed``,
batch size and sequence of actions. These games differ from ``GameState``'s ``numpy`` deals;
give ``dealer`` to deal from outside (``allfives simulate --engine batched`` does, and so
plays the very games of the scalar run).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from allfives_env.batched_engine.rules import rules_array
from allfives_env.envs.action_views import (
    FACTS,
    action_view_names,
    check_action_view,
    get_action_view,
)
from allfives_env.game.engine import Deal
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.rules import Rules
from allfives_env.game.seeding import check_seed
from allfives_env.game.tiles import N_ACTIONS, action_to_str

INSTALL_HINT = "the batched engine needs numba: pip install 'allfives[fast]'"
MAX_BATCH = 16_384
_REASONS = ("domino", "blocked", "target")

#: ``dealer(game, hand_index)``: the deal of hand ``hand_index`` of game slot ``game``; its
#: ``leader`` is used where the rules draw a random leader
#: (see :meth:`BatchedGames.needs_random_leader`).
BatchDealer = Callable[[int, int], Deal]


def array_dealer(rules: Rules, orders: np.ndarray, leaders: np.ndarray | None = None
                 ) -> BatchDealer:
    """A dealer from arrays: ``orders[game, hand]`` is a permutation of the 28 tiles (the
    hands one after another, then the boneyard in draw order), ``leaders[game, hand]`` the
    leader where the rules draw one at random (default 0)."""
    orders = np.asarray(orders)
    n, k = rules.players, rules.hand_size

    def dealer(game: int, hand: int) -> Deal:
        if hand >= orders.shape[1]:
            raise ValueError(f"game {game} goes on to hand {hand}, but orders hold "
                             f"{orders.shape[1]} hands per game")
        order = orders[game, hand].tolist()
        leader = 0 if leaders is None else int(leaders[game, hand])
        return Deal([order[s * k:(s + 1) * k] for s in range(n)], order[n * k:], leader)

    return dealer


def as_actions(actions: Any, n: int, low: int = -1, what: str = "step()") -> np.ndarray:
    """``actions`` as a C-contiguous int64 array of shape ``(n,)``, or one ValueError line.

    Accepted: an array (or list) of integers of any numpy integer width, every value in
    ``low..139``. Refused, never rounded or parsed: floats (NaN, inf, 5.7 and 5.0 alike),
    bools, strings, objects, another shape, a value out of range (``2**40``, ``140``, a
    ``uint8`` 200, anything below ``low``)."""
    allowed = f"{'-1 (leave the game as it is) or ' if low < 0 else ''}0..{N_ACTIONS - 1}"
    try:
        arr = np.asarray(actions)
    except (TypeError, ValueError):
        arr = None
    if isinstance(actions, (list, tuple)) and any(
            isinstance(a, (bool, np.bool_)) for a in actions):  # numpy would make True a 1
        arr = np.asarray(actions, dtype=object)
    if arr is None or arr.dtype.kind not in "iu":
        kind = type(actions).__name__ if arr is None else f"dtype {arr.dtype}"
        raise ValueError(f"{what}: actions must be an integer array of shape ({n},), values "
                         f"{allowed}; got {kind}")
    if arr.shape != (n,):
        raise ValueError(f"{what} wants one action per game: shape ({n},), got {arr.shape}")
    bad = arr >= N_ACTIONS
    if arr.dtype.kind == "i":
        bad |= arr < low
    if bad.any():
        b = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{what}: game {b}: action {arr[b]} is out of range: actions are "
                         f"integers {allowed}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def as_indices(values: Any, size: int, what: str, name: str = "game") -> np.ndarray:
    """``values`` as a 1-d int64 array with every entry in ``0..size-1``, or one ValueError
    line (floats, bools, another shape or an entry out of range are refused)."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.dtype.kind not in "iu" or arr.ndim != 1:
        shown = type(values).__name__ if arr is None else f"dtype {arr.dtype}, shape {arr.shape}"
        raise ValueError(f"{what}: {name}s must be a 1-d integer array of values "
                         f"0..{size - 1}, not {shown}")
    bad = arr >= size
    if arr.dtype.kind == "i":
        bad |= arr < 0
    if bad.any():
        raise ValueError(f"{what}: {name} {arr[int(np.flatnonzero(bad)[0])]} is out of range "
                         f"0..{size - 1}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _buffer(out: Any, shape: tuple[int, ...], dtype: type, what: str) -> np.ndarray:
    """``out`` when it is a writable array of this shape and dtype, else one ValueError line."""
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dtype \
            or not out.flags.writeable:
        shown = (f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray)
                 else type(out).__name__)
        raise ValueError(f"{what}: the output must be a writable {np.dtype(dtype).name} array "
                         f"of shape {shape}, not {shown}")
    return out


def kernels() -> Any:
    """The numba kernels module, or a ``RuntimeError`` with the install line."""
    try:
        from allfives_env.batched_engine import kernels as batched_kernels
    except ImportError as exc:
        raise RuntimeError(INSTALL_HINT) from exc
    return batched_kernels


@dataclasses.dataclass
class StepResult:
    """What one :meth:`BatchedGames.step` did, per game (games that did not act: zeros).

    ``deltas[b, side]``: score change of every side during the step (play and hand-end
    scoring); ``hand_over``: a hand ended; ``game_over``: the game ended (``truncated``: at
    ``max_hands``); ``winners``: the winning side of a game that ended, else -1;
    ``final_scores``: the scores of a game that ended (it may already be replaced)."""

    acted: np.ndarray
    points: np.ndarray
    deltas: np.ndarray
    hand_over: np.ndarray
    game_over: np.ndarray
    truncated: np.ndarray
    winners: np.ndarray
    final_scores: np.ndarray


class BatchedGames:
    """B games in structure-of-arrays state; see the module docstring."""

    def __init__(self, rules: Rules, batch: int, seed: int | None = 0, *,
                 autoreset: bool = True, log: bool = False,
                 dealer: BatchDealer | None = None, action_view: str = "raw") -> None:
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) \
                or not 1 <= batch <= MAX_BATCH:
            raise ValueError(f"batch={batch!r}: the batch size must be an integer 1..{MAX_BATCH}")
        if dealer is not None and autoreset:
            raise ValueError("a dealer deals fixed games: use autoreset=False with it")
        seed = check_seed(seed)
        self.action_view = check_action_view(action_view)
        # a rule value the kernels do not implement: one line, before numba is needed
        self.R = rules_array(rules, log, dealer is not None, autoreset)
        self.k = kernels()
        k = self.k
        self.rules, self.batch, self.dealer, self.log = rules, int(batch), dealer, log
        self.n_sides = rules.n_sides
        b = self.batch
        self.G = np.zeros((b, k.NG), dtype=np.int32)
        self.A = np.zeros((b, k.NA, 4), dtype=np.int32)
        self.T = np.zeros((b, k.NT, 28), dtype=np.int8)
        self.rng = np.zeros(b, dtype=np.uint64)
        self.master = np.zeros(1, dtype=np.uint64)
        n_ev = k.MAX_EVENTS if log else 1
        self.EV = np.zeros((b if log else 1, n_ev, 4), dtype=np.int16)
        self.EVP = np.zeros((b if log else 1, n_ev), dtype=np.int16)
        self.DEV = np.zeros_like(self.EV)
        self.DEVP = np.zeros_like(self.EVP)
        self._all = np.arange(b, dtype=np.int64)
        self._obs = np.empty((b, OBS_SIZE), dtype=np.float32)
        self._mask = np.empty((b, N_ACTIONS), dtype=bool)
        self._legal = np.empty((b, N_ACTIONS), dtype=bool)  # the checks' own mask buffer
        self.tmpl = k.templates(self.R)
        self.seed(seed)

    # ------------------------------------------------------------------ set-up
    def seed(self, seed: int | None) -> None:
        """Restart the stream that seeds new games (an int >= 0; ``None``: from the OS)."""
        seed = check_seed(seed)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.master[0] = np.uint64(seed % 2**64)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game in every slot (after :meth:`seed` when ``seed`` is given)."""
        if seed is not None:
            self.seed(seed)
        self.G[:, self.k.F_GAMES] = 0
        self.G[:, self.k.F_EXT_LEADER] = -1
        self.k.reset_games(self._all, self.R, self.G, self.A, self.T, self.rng, self.master)
        self._deal_wanted()

    def reset_games(self, games: np.ndarray) -> None:
        """Start a new game in the slots ``games`` (e.g. finished games without autoreset)."""
        idx = as_indices(games, self.batch, "reset_games()")
        self.k.reset_games(idx, self.R, self.G, self.A, self.T, self.rng, self.master)
        self._deal_wanted()

    def _deal_wanted(self) -> None:
        """Deal from ``dealer`` every hand the kernels marked as wanted."""
        if self.dealer is None:
            return
        k = self.k
        wanted = np.flatnonzero(self.G[:, k.F_NEED_DEAL])
        if not len(wanted):
            return
        for b in wanted:
            deal = self.dealer(int(b), int(self.G[b, k.F_HAND_IDX]))
            order, leader = self._checked_deal(int(b), deal)
            self.T[b, k.T_ORDER] = order
            self.G[b, k.F_EXT_LEADER] = leader
        k.start_hands(wanted.astype(np.int64), self.R, self.G, self.A, self.T, self.rng)

    def _checked_deal(self, b: int, deal: Deal) -> tuple[list[int], int]:
        """The tile order and leader (-1: none) of a dealer's deal, or one ValueError line."""
        n, size = self.rules.players, self.rules.hand_size
        order = [t for hand in deal.hands for t in hand] + list(deal.boneyard)
        if not all(isinstance(t, (int, np.integer)) and not isinstance(t, (bool, np.bool_))
                   for t in order) or sorted(order) != list(range(28)) \
                or [len(h) for h in deal.hands] != [size] * n:
            raise ValueError(f"game {b}: a deal must give {size} tiles to each of {n} "
                             "seats and the rest to the boneyard, every tile once")
        leader = deal.leader
        if leader is None:
            return order, -1
        if isinstance(leader, (bool, np.bool_)) or not isinstance(leader, (int, np.integer)) \
                or not 0 <= leader < n:
            raise ValueError(f"game {b}: the deal's leader {leader!r} is not a seat "
                             f"0..{n - 1} (or None)")
        return order, int(leader)

    def _game(self, game: Any, what: str) -> int:
        """One game slot as an int, or one ValueError line."""
        if isinstance(game, (bool, np.bool_)) or not isinstance(game, (int, np.integer)) \
                or not 0 <= game < self.batch:
            raise ValueError(f"{what}: game {game!r} is not a slot 0..{self.batch - 1}")
        return int(game)

    def needs_random_leader(self, game: int) -> bool:
        """Whether the hand about to be dealt in slot ``game`` has a leader drawn at random
        (the rules say ``random``, or ``hand_winner`` after a blocked hand or at the start)."""
        k, rules = self.k, self.rules
        game = self._game(game, "needs_random_leader()")
        first = self.G[game, k.F_HAND_IDX] == 0
        rule = rules.first_leader if first else rules.next_leader
        if rule == "hand_winner":
            if self.G[game, k.F_LAST_DOM] >= 0:
                return False
            rule = rules.first_leader
        return rule == "random"

    # ------------------------------------------------------------------ queries
    @property
    def current(self) -> np.ndarray:
        """[B] the seat to act in every game (meaningless where no hand is in play)."""
        return self.G[:, self.k.F_CUR]

    @property
    def in_play(self) -> np.ndarray:
        """[B] bool: a hand is in play (false only for finished games without autoreset)."""
        return self.G[:, self.k.F_HAND_OVER] == 0

    @property
    def hands(self) -> np.ndarray:
        """[B, 4] every seat's hand as a tile bitmask (hidden information: for training
        signals such as an oracle critic, never for a player)."""
        return self.A[:, self.k.R_HANDS, :]

    @property
    def scores(self) -> np.ndarray:
        """[B, n_sides] the current side scores."""
        return self.A[:, self.k.R_SCORES, :self.n_sides]

    @property
    def hand_index(self) -> np.ndarray:
        return self.G[:, self.k.F_HAND_IDX]

    def scratch_rules(self) -> np.ndarray:
        """A copy of the rules array the kernels read (``R``), with the game record off: for
        scratch games a search rolls out, which keep no record."""
        R = self.R.copy()
        R[self.k.K_LOG] = 0
        return R

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """[B, 140] bool: the legal actions of every game's seat to act (into one reused
        buffer unless ``out``)."""
        out = self._mask if out is None else _buffer(out, (self.batch, N_ACTIONS), np.bool_,
                                                     "legal_mask()")
        self.k.legal_mask(self.G, self.A, out)
        return out

    def observe(self, out: np.ndarray | None = None) -> np.ndarray:
        """[B, 386] float32: every game's observation for its seat to act
        (``observation.observe(state, state.current)``). Reuses one buffer unless ``out``."""
        return self.observe_seat(self.current, out=out)

    def observe_seat(self, seats: np.ndarray, games: np.ndarray | None = None,
                     out: np.ndarray | None = None) -> np.ndarray:
        """``observe(state, seats[j])`` for games ``games`` (default: all, in order)."""
        what = "observe_seat()"
        idx = self._all if games is None else as_indices(games, self.batch, what)
        seat = as_indices(seats, self.rules.players, what, "seat")
        if len(seat) != len(idx):
            raise ValueError(f"{what}: one seat per game: {len(idx)} games, {len(seat)} seats")
        if out is None:
            out = self._obs if games is None else np.empty((len(idx), OBS_SIZE), np.float32)
        else:
            out = _buffer(out, (len(idx), OBS_SIZE), np.float32, what)
        self.k.observe(idx, seat, self.R, self.G, self.A, self.T, self.tmpl, out)
        return out

    def observe_and_mask(self, games: np.ndarray | None = None,
                         out: np.ndarray | None = None, mask: np.ndarray | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
        """The seat to act's observation and legal mask in one pass (games: default all;
        into reused buffers unless ``games``, ``out`` or ``mask`` is given)."""
        what = "observe_and_mask()"
        idx = self._all if games is None else as_indices(games, self.batch, what)
        if out is None:
            out = self._obs if games is None else np.empty((len(idx), OBS_SIZE), np.float32)
        else:
            out = _buffer(out, (len(idx), OBS_SIZE), np.float32, what)
        if mask is None:
            mask = self._mask if games is None else np.empty((len(idx), N_ACTIONS), bool)
        else:
            mask = _buffer(mask, (len(idx), N_ACTIONS), np.bool_, what)
        self.k.observe_mask(idx, self.R, self.G, self.A, self.T, self.tmpl, out, mask)
        return out, mask

    def action_features(self, out: np.ndarray | None = None, view: str | None = None
                        ) -> np.ndarray:
        """``[B, 140, F]`` float32: the action view's rows of every game's seat to act (the
        ``action_view`` given at construction unless ``view``;
        :mod:`allfives_env.envs.action_views`),
        zero rows for actions that are not legal; a new array unless ``out``."""
        view = self.action_view if view is None else check_action_view(view)
        width = len(action_view_names(view))
        shape = (self.batch, N_ACTIONS, width)
        out = np.zeros(shape, np.float32) if out is None else _buffer(
            out, shape, np.float32, "action_features()")
        spec = get_action_view(view)
        if view == FACTS:
            from allfives_env.batched_engine.facts import batched_facts

            batched_facts(self, out)
        elif spec is not None:
            if spec.batched is None:
                raise ValueError(f"action_view={view!r} has no batched version")
            spec.batched(self, out)
        return out

    def random_actions(self, games: np.ndarray, streams: np.ndarray) -> np.ndarray:
        """A uniform legal action for each game in ``games`` (-1 for a game with no hand in
        play), drawn from the splitmix64 stream ``streams[b]`` (uint64 [B], one per slot,
        advanced in place)."""
        what = "random_actions()"
        idx = as_indices(games, self.batch, what)
        _buffer(streams, (self.batch,), np.uint64, what + " streams")
        out = np.empty(len(idx), dtype=np.int64)
        self.k.random_actions(idx, self.G, self.A, streams, out)
        out[self.G[idx, self.k.F_HAND_OVER] != 0] = -1
        return out

    # ------------------------------------------------------------------ stepping
    def step(self, actions: np.ndarray) -> StepResult:
        """Play ``actions[b]`` for the seat to act of every game b (``-1``: leave game b as
        it is). ``actions``: integers of shape ``(B,)``, each -1 or legal under
        :meth:`legal_mask`; anything else raises one ``ValueError`` line naming the first bad
        game, and nothing changes (the module docstring lists what is refused)."""
        acts = as_actions(actions, self.batch)
        self._check_legal(acts)
        return self.step_unchecked(acts)

    def step_unchecked(self, actions: np.ndarray) -> StepResult:
        """:meth:`step` without the legality check, for the hot loops whose actions come
        straight from a masked sampler (:meth:`random_actions`, the batched bots, a policy
        sampled under :meth:`legal_mask`). Only the cheap checks run (an int64 array of shape
        ``(B,)``, values ``-1..139``): an illegal action in range corrupts the games (a tile
        lands in a hand twice). Anything else: use :meth:`step`."""
        acts = actions
        if not isinstance(acts, np.ndarray) or acts.dtype != np.int64 \
                or acts.shape != (self.batch,):
            acts = as_actions(actions, self.batch, what="step_unchecked()")
        elif len(acts) and (acts.max() >= N_ACTIONS or acts.min() < -1):
            as_actions(acts, self.batch, what="step_unchecked()")  # raises, naming the game
        live = (acts >= 0) & self.in_play
        self.k.step(acts, self.R, self.G, self.A, self.T, self.rng, self.master, self.EV,
                    self.EVP, self.DEV, self.DEVP)
        result = self._result(live)
        self._deal_wanted()
        return result

    def _check_legal(self, acts: np.ndarray) -> None:
        """ValueError naming the first game whose action (int64, in range) is not legal."""
        live = acts >= 0
        if not live.any():
            return
        mask = self.legal_mask(self._legal)
        bad = live & ~mask[self._all, np.where(live, acts, 0)]
        if not bad.any():
            return
        b = int(np.flatnonzero(bad)[0])
        a = int(acts[b])
        if not mask[b].any():
            raise ValueError(f"game {b}: action {a}, but game {b} has no hand in play (it "
                             f"ended; autoreset=False): give -1 for it, or reset_games([{b}])")
        raise ValueError(f"game {b}: action {a} ({action_to_str(a)}) is not legal; legal: "
                         f"{np.flatnonzero(mask[b]).tolist()}")

    def check(self, actions: np.ndarray | None = None) -> None:
        """ValueError naming the first game whose state breaks an invariant of the game
        (the 28 tiles split among the hands, the line and the boneyard, each once; who
        played what; the boneyard's bounds; scores in steps of 5, not below 0 unless the
        rules subtract; a legal move for the seat to act). With ``actions``, first the checks
        :meth:`step` makes on them (``-1`` allowed)."""
        if actions is not None:
            self._check_legal(as_actions(actions, self.batch, what="check()"))
        for what, bad in self._broken():
            if bad.any():
                b = int(np.flatnonzero(bad)[0])
                raise ValueError(f"game {b}: the state is inconsistent: {what}")

    def _broken(self) -> list[tuple[str, np.ndarray]]:
        """Every invariant as (what it says, [B] bool: the games that break it)."""
        k = self.k
        G, A = self.G.astype(np.int64), self.A.astype(np.int64)
        scores = A[:, k.R_SCORES]
        floor = -2**31 if self.R[k.K_SUBTRACT] else 0
        every = [
            ("a score is not a multiple of 5", (scores % 5 != 0).any(1)),
            ("a score is below 0", (scores[:, :self.n_sides] < floor).any(1)),
            ("a side past the rules' sides has points", (scores[:, self.n_sides:] != 0).any(1)),
            ("hand_over is not 0 or 1", (G[:, k.F_HAND_OVER] < 0) | (G[:, k.F_HAND_OVER] > 1)),
        ]
        live = G[:, k.F_HAND_OVER] == 0
        return every + [(what, bad & live) for what, bad in self._broken_hands(G, A)]

    def _broken_hands(self, G: np.ndarray, A: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """The invariants of a hand in play (tiles, line, boneyard, seat to act)."""
        k, n, full = self.k, self.rules.players, (1 << 28) - 1
        T = self.T.astype(np.int64)
        hands, order, played_by = A[:, k.R_HANDS], T[:, k.T_ORDER], T[:, k.T_PLAYED]
        played, narms = G[:, k.F_PLAYED_M], G[:, k.F_NARMS]
        pos, end, cur = G[:, k.F_BONE_POS], G[:, k.F_BONE_END], G[:, k.F_CUR]
        undrawn = np.arange(28)[None, :] >= pos[:, None]
        bone = np.where(undrawn, np.left_shift(1, order.clip(0, 27)), 0).sum(1)
        on_line = np.bitwise_count(played & full).astype(np.int64)
        counts = (np.bitwise_count(hands & full).sum(1) + on_line
                  + np.bitwise_count(bone & full)).astype(np.int64)
        bits = (played[:, None] >> np.arange(28)) & 1 == 1
        ends = A[:, k.R_ENDS]
        bad_ends = ((ends < 0) | (ends > 6)).any(1)
        bad_cur = (cur < 0) | (cur >= n)
        bad_bits = ((hands < 0) | (hands > full)).any(1)
        no_move = np.zeros(len(cur), dtype=bool)
        if not (bad_cur | bad_ends | bad_bits).any():  # what the mask kernel indexes by
            no_move = np.logical_not(self.legal_mask(self._legal).any(1))
        return [
            ("the deal is not a permutation of the 28 tiles",
             (np.sort(order, axis=1) != np.arange(28)).any(1)),
            ("a hand holds bits past tile 27", bad_bits),
            ("a seat past the players holds tiles", (hands[:, n:] != 0).any(1)),
            ("the boneyard's bounds are off",
             (pos < n * self.rules.hand_size) | (pos > end) | (end > 28)),
            ("a tile is in two places (hands, line, boneyard)", counts != 28),
            ("the hands, the line and the boneyard do not hold all 28 tiles",
             np.bitwise_or.reduce(hands, axis=1) | played | bone != full),
            ("the tiles on the line do not match the play count", on_line != G[:, k.F_NPLAYED]),
            ("who played which tile does not match the line",
             ((played_by >= 0) != bits).any(1) | (played_by >= n).any(1)
             | (played_by < -1).any(1)),
            ("the seat to act is not a seat", bad_cur),
            ("an open end is not a number 0..6", bad_ends),
            ("the layout's arms are not 0 (nothing played), 2 or 4",
             ~np.isin(narms, (0, 2, 4)) | ((narms == 0) != (on_line == 0))),
            ("the seat to act has no legal move", no_move),
        ]

    def _result(self, live: np.ndarray) -> StepResult:
        k, G, A, n = self.k, self.G, self.A, self.n_sides
        game_over = G[:, k.F_GAME_ENDED] == 1
        return StepResult(
            acted=live,
            points=G[:, k.F_POINTS].copy(),
            deltas=A[:, k.R_DELTA, :n].copy(),
            hand_over=G[:, k.F_HAND_ENDED] == 1,
            game_over=game_over,
            truncated=game_over & (G[:, k.F_FIN_TRUNC] == 1),
            winners=np.where(game_over, G[:, k.F_FIN_WINNER], -1),
            final_scores=A[:, k.R_FINAL, :n] * game_over[:, None],
        )

    # ------------------------------------------------------------------ records
    def finished_hand(self, b: int) -> dict[str, Any]:
        """The hand game b finished in the last step, as ``GameState.history`` holds it
        (needs ``log=True``): leader, deal, events, result, scores."""
        if not self.log:
            raise RuntimeError("BatchedGames(log=False) keeps no hands: make it with log=True")
        b = self._game(b, "finished_hand()")
        k, G, A = self.k, self.G, self.A
        n, size = self.rules.players, self.rules.hand_size
        order = self.T[b, k.T_DONE_ORDER].tolist()
        deal = Deal([order[s * size:(s + 1) * size] for s in range(n)], order[n * size:])
        events: list[tuple] = []
        for j in range(int(G[b, k.F_DEV_N])):
            kind, seat, tile, end = (int(x) for x in self.DEV[b, j])
            if kind == k.EV_PLAY:
                events.append(("play", seat, tile, end, int(self.DEVP[b, j])))
            elif kind == k.EV_DRAW:
                events.append(("draw", seat, tile))
            else:
                events.append(("pass", seat))
        winner = int(G[b, k.F_HWINNER])
        game_ended = G[b, k.F_GAME_ENDED] == 1
        scores = A[b, k.R_FINAL if game_ended else k.R_SCORES, :self.n_sides]
        return {
            "leader": int(G[b, k.F_DONE_LEADER]),
            "deal": deal,
            "events": events,
            "result": {"reason": _REASONS[int(G[b, k.F_REASON])],
                       "winner": None if winner < 0 else winner,
                       "hand_points": A[b, k.R_HPTS, :self.n_sides].tolist()},
            "scores": scores.tolist(),
        }
