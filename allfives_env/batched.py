"""The batched engine: B independent games of All Fives stepped in one call.

The same game as :class:`allfives_env.engine.GameState` (a differential test drives both with
the same deals and actions), held as structure-of-arrays numpy state and stepped by numba
kernels (:mod:`allfives_env.batched_kernels`; install with ``pip install 'allfives[fast]'``)::

    games = BatchedGames(make_rules("five_up", players=3), batch=4096, seed=0)
    games.reset()
    obs, mask = games.observe(), games.legal_mask()      # [B, 386] float32, [B, 140] bool
    result = games.step(actions)                          # one action per game (-1: skip)

After every step each game that is still in play has a seat to act (forced draws, passes and
the next hand's deal happen inside the step). With ``autoreset`` (the default) a finished game
is replaced at once by a new one; :class:`StepResult` describes the finished game.

Seeds: ``seed`` starts one splitmix64 stream; each new game takes its own stream's seed from
it, so a run is reproducible for a given ``seed``, batch size and sequence of actions. These
games differ from ``GameState``'s ``numpy`` deals; give ``dealer`` to deal from outside
(``allfives simulate --engine batched`` does, and so plays the very games of the scalar run).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from allfives_env.engine import Deal
from allfives_env.observation import OBS_SIZE
from allfives_env.rules import Rules
from allfives_env.tiles import N_ACTIONS

INSTALL_HINT = "the batched engine needs numba: pip install 'allfives[fast]'"
MAX_BATCH = 16_384
_LEADER_CODES = {"random": 0, "highest_double": 1, "hand_winner": 2}
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


def kernels() -> Any:
    """The numba kernels module, or a ``RuntimeError`` with the install line."""
    try:
        from allfives_env import batched_kernels
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


def rules_array(rules: Rules, log: bool, external: bool, autoreset: bool) -> np.ndarray:
    return np.array([
        rules.players, rules.teams, rules.n_sides, rules.hand_size, rules.target,
        rules.win_check == "immediate", _LEADER_CODES[rules.first_leader],
        _LEADER_CODES[rules.next_leader], rules.spinner, rules.hand_end == "subtract_own",
        rules.rounding == "total", rules.boneyard_reserve, rules.max_hands, log, external,
        autoreset], dtype=np.int64)


class BatchedGames:
    """B games in structure-of-arrays state; see the module docstring."""

    def __init__(self, rules: Rules, batch: int, seed: int | None = 0, *,
                 autoreset: bool = True, log: bool = False,
                 dealer: BatchDealer | None = None) -> None:
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) \
                or not 1 <= batch <= MAX_BATCH:
            raise ValueError(f"batch={batch!r}: the batch size must be an integer 1..{MAX_BATCH}")
        if dealer is not None and autoreset:
            raise ValueError("a dealer deals fixed games: use autoreset=False with it")
        self.k = kernels()
        k = self.k
        self.rules, self.batch, self.dealer, self.log = rules, int(batch), dealer, log
        self.n_sides = rules.n_sides
        self.R = rules_array(rules, log, dealer is not None, autoreset)
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
        self.tmpl = k.templates(self.R)
        self.seed(seed)

    # ------------------------------------------------------------------ set-up
    def seed(self, seed: int | None) -> None:
        """Restart the stream that seeds new games (``None``: from the OS)."""
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.master[0] = np.uint64(int(seed) % 2**64)

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
        idx = np.asarray(games, dtype=np.int64)
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
        n, size = self.rules.players, self.rules.hand_size
        for b in wanted:
            deal = self.dealer(int(b), int(self.G[b, k.F_HAND_IDX]))
            order = [t for hand in deal.hands for t in hand] + list(deal.boneyard)
            if sorted(order) != list(range(28)) or [len(h) for h in deal.hands] != [size] * n:
                raise ValueError(f"game {b}: a deal must give {size} tiles to each of {n} "
                                 "seats and the rest to the boneyard, every tile once")
            self.T[b, k.T_ORDER] = order
            self.G[b, k.F_EXT_LEADER] = -1 if deal.leader is None else deal.leader
        k.start_hands(wanted.astype(np.int64), self.R, self.G, self.A, self.T, self.rng)

    def needs_random_leader(self, game: int) -> bool:
        """Whether the hand about to be dealt in slot ``game`` has a leader drawn at random
        (the rules say ``random``, or ``hand_winner`` after a blocked hand or at the start)."""
        k, rules = self.k, self.rules
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
    def scores(self) -> np.ndarray:
        """[B, n_sides] the current side scores."""
        return self.A[:, self.k.R_SCORES, :self.n_sides]

    @property
    def hand_index(self) -> np.ndarray:
        return self.G[:, self.k.F_HAND_IDX]

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """[B, 140] bool: the legal actions of every game's seat to act."""
        out = self._mask if out is None else out
        self.k.legal_mask(self.G, self.A, out)
        return out

    def observe(self, out: np.ndarray | None = None) -> np.ndarray:
        """[B, 386] float32: every game's observation for its seat to act
        (``observation.observe(state, state.current)``). Reuses one buffer unless ``out``."""
        return self.observe_seat(self.current, out=out)

    def observe_seat(self, seats: np.ndarray, games: np.ndarray | None = None,
                     out: np.ndarray | None = None) -> np.ndarray:
        """``observe(state, seats[j])`` for games ``games`` (default: all, in order)."""
        idx = self._all if games is None else np.asarray(games, dtype=np.int64)
        if out is None:
            out = self._obs if games is None else np.empty((len(idx), OBS_SIZE), np.float32)
        self.k.observe(idx, np.asarray(seats, dtype=np.int64), self.R, self.G, self.A,
                       self.T, self.tmpl, out)
        return out

    def observe_and_mask(self, games: np.ndarray | None = None,
                         out: np.ndarray | None = None, mask: np.ndarray | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
        """The seat to act's observation and legal mask in one pass (games: default all)."""
        idx = self._all if games is None else np.asarray(games, dtype=np.int64)
        if out is None:
            out = self._obs if games is None else np.empty((len(idx), OBS_SIZE), np.float32)
        if mask is None:
            mask = self._mask if games is None else np.empty((len(idx), N_ACTIONS), bool)
        self.k.observe_mask(idx, self.R, self.G, self.A, self.T, self.tmpl, out, mask)
        return out, mask

    def random_actions(self, games: np.ndarray, streams: np.ndarray) -> np.ndarray:
        """A uniform legal action for each game in ``games``, drawn from the splitmix64
        stream ``streams[b]`` (uint64, one per slot, advanced in place)."""
        idx = np.asarray(games, dtype=np.int64)
        out = np.empty(len(idx), dtype=np.int64)
        self.k.random_actions(idx, self.G, self.A, streams, out)
        return out

    # ------------------------------------------------------------------ stepping
    def step(self, actions: np.ndarray) -> StepResult:
        """Play ``actions[b]`` for the seat to act of every game b (``-1``: leave game b as
        it is). Actions are not checked: use :meth:`legal_mask` (or :meth:`check`)."""
        k = self.k
        acts = np.asarray(actions, dtype=np.int64)
        if acts.shape != (self.batch,):
            raise ValueError(f"step() wants one action per game: shape ({self.batch},), "
                             f"got {acts.shape}")
        live = (acts >= 0) & self.in_play
        k.step(acts, self.R, self.G, self.A, self.T, self.rng, self.master, self.EV, self.EVP,
               self.DEV, self.DEVP)
        result = self._result(live)
        self._deal_wanted()
        return result

    def check(self, actions: np.ndarray) -> None:
        """ValueError naming the first game whose action is not legal (``-1`` allowed)."""
        acts = np.asarray(actions, dtype=np.int64)
        mask = self.legal_mask(np.empty((self.batch, N_ACTIONS), bool))
        live = acts >= 0
        bad = live & ~mask[self._all, np.clip(acts, 0, N_ACTIONS - 1)]
        bad |= acts >= N_ACTIONS
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            raise ValueError(f"game {b}: action {int(acts[b])} is not legal; legal: "
                             f"{np.flatnonzero(mask[b]).tolist()}")

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
