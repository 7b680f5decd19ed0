"""The All Fives rules engine: no gymnasium, no pettingzoo, no torch.

:class:`GameState` holds a whole game (a series of hands). It is cheap to copy
(:meth:`GameState.copy`), draws all randomness from one ``numpy.random.Generator``, and takes
an optional ``dealer`` so tests can force exact hands, boneyard order and leader.

Decisions are actions ``tile * 5 + end`` (see :mod:`allfives_env.game.tiles`). Forced draws and
passes are resolved inside :meth:`GameState.apply`, so whenever a hand is in progress the seat
``current`` has at least one legal action. When a hand ends, ``hand_over`` is set; call
:meth:`GameState.next_hand` to deal the next one (unless ``game_over``).

The layout fields (``ends``, ``dbl``, ``cnt``, ``n_arms``, ``spinner``, ``spin_wait``) and
what a move scores are defined in :mod:`allfives_env.game.layout`; ``apply`` inlines that module's
:func:`~allfives_env.game.layout.layout_after` on its hot path (``tests/test_layout.py`` pins the
two together). Rule variants (leaders, hand-end scoring, rounding) are dispatched through the
tables at the end of this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from allfives_env.game.layout import SPIN_LEAD, SPIN_NONE, layout_points, open_total
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import (
    IS_DOUBLE,
    LEAD,
    N_ENDS,
    N_TILES,
    OTHER_HALF,
    SUIT_MASK,
    TILE_HIGH,
    TILE_LOW,
    TILE_PIPS,
    mask_to_tiles,
    round5,
    tiles_to_mask,
)

__all__ = ["SPIN_LEAD", "SPIN_NONE", "Deal", "Dealer", "GameState", "highest_double_lead",
           "layout_points", "random_deal"]


@dataclasses.dataclass
class Deal:
    """One hand's deal: ``hands[seat]`` in dealing order, ``boneyard`` in draw order.

    ``leader`` (optional) stands in for a random leader choice (tests, replays); leaders that
    the rules determine (``highest_double``, the seat that dominoed) ignore it.
    """

    hands: list[list[int]]
    boneyard: list[int]
    leader: int | None = None


Dealer = Callable[[int, np.random.Generator], Deal]


def random_deal(rules: Rules, rng: np.random.Generator) -> Deal:
    order: list[int] = rng.permutation(N_TILES).tolist()
    k = rules.hand_size
    hands = [order[s * k:(s + 1) * k] for s in range(rules.players)]
    return Deal(hands, order[rules.players * k:])


def highest_double_lead(hands: Sequence[int]) -> tuple[int, int]:
    """(seat, tile) for the highest dealt double, else the heaviest dealt tile."""
    best_seat, best_key, best_tile = -1, (-1, -1, -1), -1
    for seat, hand in enumerate(hands):
        for t in mask_to_tiles(hand):
            key = (int(IS_DOUBLE[t]), TILE_PIPS[t], TILE_HIGH[t])
            if key > best_key:
                best_seat, best_key, best_tile = seat, key, t
    return best_seat, best_tile


def _arm_action_table(arm: int) -> dict[int, tuple[int, ...]]:
    """``table[m]``: the actions that play the tiles of ``m`` on ``arm``, for every set ``m``
    of tiles that share a number (all a hand can match on one end)."""
    table: dict[int, tuple[int, ...]] = {}
    for suit in SUIT_MASK:
        tiles = mask_to_tiles(suit)
        for pick in range(1 << len(tiles)):
            m = sum(1 << t for k, t in enumerate(tiles) if pick >> k & 1)
            table[m] = tuple(t * N_ENDS + arm + 1 for t in mask_to_tiles(m))
    return table


#: _ARM_ACTIONS[i][m]: the actions that play the tiles of set m on arm i (m within one suit).
_ARM_ACTIONS: tuple[dict[int, tuple[int, ...]], ...] = tuple(
    _arm_action_table(i) for i in range(4))


class GameState:
    """A whole game of All Fives. See the module docstring for the layout fields."""

    __slots__ = (
        "rules", "n", "side", "rng", "dealer", "log",
        "scores", "hand_index", "game_over", "winner", "truncated", "last_domino_seat",
        "hands", "boneyard", "bone_pos", "bone_end", "played_by", "lacks",
        "ends", "dbl", "cnt", "n_arms", "n_played", "lead_tile", "spinner", "spin_wait",
        "current", "leader", "forced_lead", "hand_over", "hand_result", "deal", "history",
    )
    hand_result: dict[str, Any] | None  # reason, winner, hand_points of the hand just ended
    deal: Deal | None  # this hand's deal (None in a world sampled from a seat's view)

    def __init__(
        self,
        rules: Rules,
        seed: int | np.random.Generator | None = None,
        dealer: Dealer | None = None,
        log: bool = True,
    ) -> None:
        self.rules = rules
        self.n = rules.players
        self.side = tuple(rules.side_of(s) for s in range(self.n))
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.dealer = dealer
        self.log: list[tuple] | None = [] if log else None
        self.history: list[dict] = []
        self.scores = [0] * rules.n_sides
        self.hand_index = 0
        self.game_over = False
        self.winner: int | None = None
        self.truncated = False
        self.last_domino_seat: int | None = None
        self._start_hand()

    # ------------------------------------------------------------------ copying
    def copy(self, log: bool = False) -> GameState:
        """A cheap independent copy (shares ``rules``, ``rng`` and ``dealer``; no event log
        unless ``log``)."""
        new = object.__new__(GameState)
        for name in ("rules", "n", "side", "rng", "dealer", "game_over", "winner", "truncated",
                     "last_domino_seat", "hand_index", "bone_pos", "bone_end", "boneyard",
                     "n_arms", "n_played", "lead_tile", "spinner", "spin_wait", "current",
                     "leader", "forced_lead", "hand_over", "hand_result", "deal", "history"):
            setattr(new, name, getattr(self, name))
        new.scores = self.scores[:]
        new.hands = self.hands[:]
        new.played_by = self.played_by[:]
        new.lacks = self.lacks[:]
        new.ends = self.ends[:]
        new.dbl = self.dbl[:]
        new.cnt = self.cnt[:]
        new.log = self.log[:] if (log and self.log is not None) else None
        if log:
            new.history = [dict(h) for h in self.history]
        return new

    # ------------------------------------------------------------------ dealing
    def _start_hand(self) -> None:
        rules = self.rules
        if self.dealer:
            deal = self.dealer(self.hand_index, self.rng)
        else:
            deal = random_deal(rules, self.rng)
        self.deal = deal
        self.hands = [tiles_to_mask(h) for h in deal.hands]
        self.boneyard = list(deal.boneyard)
        self.bone_pos = 0
        self.bone_end = max(0, len(self.boneyard) - rules.boneyard_reserve)
        self.played_by = [-1] * N_TILES
        self.lacks = [0] * self.n
        self.ends = [0, 0, 0, 0]
        self.dbl = [False, False, False, False]
        self.cnt = [0, 0, 0, 0]
        self.n_arms = 0
        self.n_played = 0
        self.lead_tile = -1
        self.spinner = -1
        self.spin_wait = SPIN_NONE
        self.hand_over = False
        self.hand_result = None
        if self.log is not None:
            self.log = []
        self.leader, self.forced_lead = self._choose_leader(deal)
        self.current = self.leader

    def _choose_leader(self, deal: Deal) -> tuple[int, int]:
        """(leader, forced lead tile or -1). ``deal.leader`` stands in for a random choice."""
        rule = self.rules.first_leader if self.hand_index == 0 else self.rules.next_leader
        if rule == "hand_winner" and self.last_domino_seat is None:
            rule = self.rules.first_leader  # after a blocked hand: as for the first hand
        return _LEADERS[rule](self, deal)

    def _hand_winner_leads(self, deal: Deal) -> tuple[int, int]:
        assert self.last_domino_seat is not None
        return self.last_domino_seat, -1

    def _highest_double_leads(self, deal: Deal) -> tuple[int, int]:
        return highest_double_lead(self.hands)

    def _random_leader(self, deal: Deal) -> tuple[int, int]:
        if deal.leader is not None:
            return deal.leader, -1
        return int(self.rng.integers(self.n)), -1

    def next_hand(self) -> None:
        """Deal the next hand after ``hand_over`` (not after ``game_over``)."""
        if not self.hand_over or self.game_over:
            raise RuntimeError("next_hand() is only valid after a hand ended and the game did not")
        self.hand_index += 1
        self._start_hand()

    # ------------------------------------------------------------------ queries
    def open_mask(self) -> int:
        """The set of tiles that match some open end (all tiles before the lead)."""
        if self.n_played == 0:
            return (1 << N_TILES) - 1
        ends = self.ends
        m = SUIT_MASK[ends[0]] | SUIT_MASK[ends[1]]
        if self.n_arms == 4:
            m |= SUIT_MASK[ends[2]] | SUIT_MASK[ends[3]]
        return m

    def open_numbers(self) -> int:
        """7-bit set of the numbers open on the layout."""
        m = 0
        for i in range(self.n_arms):
            m |= 1 << self.ends[i]
        return m

    def legal_actions(self) -> list[int]:
        """Legal actions of the seat to act, in increasing order of (tile, end)."""
        if self.hand_over:
            return []
        hand = self.hands[self.current]
        if self.n_played == 0:
            if self.forced_lead >= 0:
                return [self.forced_lead * N_ENDS]
            return [t * N_ENDS for t in mask_to_tiles(hand)]
        ends, arm = self.ends, _ARM_ACTIONS
        if self.n_arms == 2:
            out = [*arm[0][hand & SUIT_MASK[ends[0]]], *arm[1][hand & SUIT_MASK[ends[1]]]]
        else:
            out = [*arm[0][hand & SUIT_MASK[ends[0]]], *arm[1][hand & SUIT_MASK[ends[1]]],
                   *arm[2][hand & SUIT_MASK[ends[2]]], *arm[3][hand & SUIT_MASK[ends[3]]]]
        out.sort()
        return out

    def open_sum(self) -> int:
        """The sum of the open ends as the rules count it (:mod:`allfives_env.game.layout`)."""
        if self.n_played == 1:
            return TILE_PIPS[self.lead_tile]
        return open_total(self.ends, self.dbl, self.cnt, self.n_arms)

    def points_if(self, action: int) -> int:
        """Points the seat to act would score by ``action`` (no state change)."""
        return layout_points(self.ends, self.dbl, self.cnt, self.n_arms, action)

    def pips_left(self, seat: int) -> int:
        hand, total = self.hands[seat], 0
        while hand:
            low = hand & -hand
            total += TILE_PIPS[low.bit_length() - 1]
            hand ^= low
        return total

    # ------------------------------------------------------------------ playing
    def apply(self, action: int) -> int:
        """Play ``action`` for the seat to act (no legality check: see :meth:`play`).

        Resolves forced draws, passes, scoring, hand end and game end. Returns the points
        scored by the play.
        """
        seat = self.current
        t, end = divmod(action, N_ENDS)
        self.hands[seat] ^= 1 << t
        self.played_by[t] = seat
        self.n_played += 1
        is_double = IS_DOUBLE[t]
        ends, dbl, cnt = self.ends, self.dbl, self.cnt
        if end == LEAD:
            self.lead_tile = t
            self.n_arms = 2
            ends[0], ends[1] = TILE_LOW[t], TILE_HIGH[t]
            dbl[0] = dbl[1] = is_double
            if is_double and self.rules.spinner:
                self.spinner, self.spin_wait = t, SPIN_LEAD
            total = TILE_PIPS[t]  # a lone lead counts its pips once
        else:  # layout.layout_after, inlined
            i = end - 1
            ends[i] = OTHER_HALF[t * 7 + ends[i]]
            dbl[i] = is_double
            cnt[i] += 1
            wait = self.spin_wait
            if wait == i or (wait == SPIN_LEAD and cnt[0] and cnt[1]):
                self._open_spinner_ends()
            elif is_double and self.spinner < 0 and self.rules.spinner:
                self.spinner, self.spin_wait = t, i
            total = ends[0] * (1 + dbl[0]) + ends[1] * (1 + dbl[1])  # open_sum(), inlined
            if self.n_arms == 4:
                if cnt[2]:
                    total += ends[2] * (1 + dbl[2])
                if cnt[3]:
                    total += ends[3] * (1 + dbl[3])
        points = total if total % 5 == 0 else 0  # layout.score_of, inlined
        if self.log is not None:
            self.log.append(("play", seat, t, end, points))
        if points:
            side = self.side[seat]
            self.scores[side] += points
            if self.rules.immediate_win and self.scores[side] >= self.rules.target:
                self._end_hand("target", side, [0] * len(self.scores))
                return points
        hands = self.hands
        if not hands[seat]:
            self.last_domino_seat = seat
            self._end_hand("domino", self.side[seat], self._domino_points(seat))
            return points
        open_m = SUIT_MASK[ends[0]] | SUIT_MASK[ends[1]]  # open_mask(), inlined
        if self.n_arms == 4:
            open_m |= SUIT_MASK[ends[2]] | SUIT_MASK[ends[3]]
        nxt = seat + 1 if seat + 1 < self.n else 0
        if hands[nxt] & open_m:  # the common case: the next seat can play
            self.current = nxt
        else:
            self._advance(seat, open_m)
        return points

    def play(self, action: int) -> int:
        """:meth:`apply` after checking that ``action`` is legal (ValueError otherwise)."""
        legal = self.legal_actions()
        if action not in legal:
            from allfives_env.game.tiles import action_to_str

            shown = ", ".join(f"{a} ({action_to_str(a)})" for a in legal)
            what = action_to_str(action) if isinstance(action, int) and 0 <= action < 140 else ""
            raise ValueError(
                f"illegal action {action!r} {what} for seat {self.current}; legal: {shown}"
            )
        return self.apply(action)

    def _open_spinner_ends(self) -> None:
        v = TILE_LOW[self.spinner]
        self.ends[2] = self.ends[3] = v
        self.n_arms = 4
        self.spin_wait = SPIN_NONE

    def _advance(self, seat: int, open_m: int) -> None:
        """Move to the next seat that can act, drawing and passing as the rules force.
        ``open_m`` is :meth:`open_mask` (fixed while seats draw and pass)."""
        n, hands = self.n, self.hands
        log = self.log
        while True:
            seat = seat + 1 if seat + 1 < n else 0
            if hands[seat] & open_m:
                self.current = seat
                return
            if self.bone_pos >= self.bone_end and not any(h & open_m for h in hands):
                self._end_hand_blocked()
                return
            numbers = self.open_numbers()
            kept = 0
            while self.bone_pos < self.bone_end:
                t = self.boneyard[self.bone_pos]
                self.bone_pos += 1
                hands[seat] |= 1 << t
                if log is not None:
                    log.append(("draw", seat, t))
                if (1 << t) & open_m:
                    self.lacks[seat] = numbers if kept else self.lacks[seat] | numbers
                    self.current = seat
                    return
                kept += 1
            self.lacks[seat] = numbers if kept else self.lacks[seat] | numbers
            if log is not None:
                log.append(("pass", seat))
            if not any(h & open_m for h in hands):
                self._end_hand_blocked()
                return

    # ------------------------------------------------------------------ hand end
    def _domino_points(self, seat: int) -> list[int]:
        return _DOMINO_POINTS[self.rules.hand_end](self, self.side[seat])

    def _subtract_own(self, winner: int | None = None) -> list[int]:
        pts = [0] * len(self.scores)
        for s in range(self.n):
            pts[self.side[s]] -= round5(self.pips_left(s))
        return pts

    def _collect(self, winner: int) -> list[int]:
        pts = [0] * len(self.scores)
        opp = [self.pips_left(s) for s in range(self.n) if self.side[s] != winner]
        pts[winner] = _ROUNDING[self.rules.rounding](opp)
        return pts

    def _end_hand_blocked(self) -> None:
        _BLOCKED[self.rules.hand_end](self)

    def _blocked_subtract_own(self) -> None:
        self._end_hand("blocked", None, self._subtract_own())

    def _blocked_fewest_pips(self) -> None:
        """``winner_collects``: the side with the fewest pips, then the fewest tiles, wins;
        a full tie scores nothing."""
        n_sides = len(self.scores)
        pips, tiles = [0] * n_sides, [0] * n_sides
        for s in range(self.n):
            pips[self.side[s]] += self.pips_left(s)
            tiles[self.side[s]] += self.hands[s].bit_count()
        keys = sorted((pips[i], tiles[i], i) for i in range(n_sides))
        if keys[0][:2] == keys[1][:2]:
            self._end_hand("blocked", None, [0] * n_sides)
        else:
            self._end_hand("blocked", keys[0][2], self._collect(keys[0][2]))

    def _end_hand(self, reason: str, winner: int | None, hand_points: list[int]) -> None:
        self.hand_over = True
        for i, p in enumerate(hand_points):
            self.scores[i] += p
        self.hand_result = {"reason": reason, "winner": winner, "hand_points": hand_points}
        if reason != "domino":
            self.last_domino_seat = None
        rules = self.rules
        if reason == "target":
            self._end_game(winner)
        else:
            top = max(self.scores)
            leaders = [i for i, s in enumerate(self.scores) if s == top]
            if top >= rules.target and (rules.immediate_win or len(leaders) == 1):
                self._end_game(leaders[0])
            elif self.hand_index + 1 >= rules.max_hands:
                self.truncated = True
                self._end_game(None)
        if self.log is not None:
            self.history.append(self._hand_record())

    def _end_game(self, winner: int | None) -> None:
        self.game_over = True
        self.winner = winner

    def _hand_record(self) -> dict:
        return {
            "leader": self.leader,
            "deal": self.deal,
            "events": self.log,
            "result": self.hand_result,
            "scores": self.scores[:],
        }


# ---------------------------------------------------------------------- rule variants
_LEADERS: dict[str, Callable[[GameState, Deal], tuple[int, int]]] = {
    "hand_winner": GameState._hand_winner_leads,
    "highest_double": GameState._highest_double_leads,
    "random": GameState._random_leader,
}
_DOMINO_POINTS: dict[str, Callable[[GameState, int], list[int]]] = {
    "subtract_own": GameState._subtract_own,
    "winner_collects": GameState._collect,
}
_BLOCKED: dict[str, Callable[[GameState], None]] = {
    "subtract_own": GameState._blocked_subtract_own,
    "winner_collects": GameState._blocked_fewest_pips,
}
_ROUNDING: dict[str, Callable[[list[int]], int]] = {
    "per_hand": lambda pips: sum(round5(p) for p in pips),  # round each hand, then add
    "total": lambda pips: round5(sum(pips)),  # add, then round once
}
