"""What one seat may know: :class:`SeatView`, and sampling hidden hands consistent with it.

Bots receive a :class:`SeatView` (never the :class:`GameState`): their own hand, the layout,
every tile played and by whom, hand sizes, boneyard size, the numbers each seat is known to
lack (it drew or passed while they were open), scores and target. Nothing about the other
hands or the boneyard order. :meth:`SeatView.sample_state` builds a full state that agrees with
everything the view shows, for determinized search.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from allfives_env.game.engine import GameState
from allfives_env.game.layout import layout_points
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import ALL_TILES_MASK, N_NUMBERS, SUIT_MASK, mask_to_tiles


@dataclasses.dataclass(frozen=True)
class SeatView:
    """The public information plus one seat's own hand. Tile sets are 28-bit masks."""

    seat: int
    rules: Rules
    hand: int
    legal: tuple[int, ...]
    current: int
    leader: int
    hand_index: int
    ends: tuple[int, ...]
    dbl: tuple[bool, ...]
    cnt: tuple[int, ...]
    n_arms: int
    n_played: int
    lead_tile: int
    spinner: int
    spin_wait: int
    forced_lead: int
    played_by: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    boneyard_size: int
    drawable: int
    lacks: tuple[int, ...]
    scores: tuple[int, ...]
    last_domino_seat: int | None

    @classmethod
    def of(cls, state: GameState, seat: int) -> SeatView:
        return cls(
            seat=seat, rules=state.rules, hand=state.hands[seat],
            legal=tuple(state.legal_actions()) if state.current == seat else (),
            current=state.current, leader=state.leader, hand_index=state.hand_index,
            ends=tuple(state.ends), dbl=tuple(state.dbl), cnt=tuple(state.cnt),
            n_arms=state.n_arms, n_played=state.n_played, lead_tile=state.lead_tile,
            spinner=state.spinner, spin_wait=state.spin_wait, forced_lead=state.forced_lead,
            played_by=tuple(state.played_by),
            hand_sizes=tuple(h.bit_count() for h in state.hands),
            boneyard_size=len(state.boneyard) - state.bone_pos,
            drawable=state.bone_end - state.bone_pos,
            lacks=tuple(state.lacks), scores=tuple(state.scores),
            last_domino_seat=state.last_domino_seat,
        )

    @property
    def n(self) -> int:
        return self.rules.players

    @property
    def target(self) -> int:
        return self.rules.target

    @property
    def side(self) -> int:
        return self.rules.side_of(self.seat)

    @property
    def played_mask(self) -> int:
        return sum(1 << t for t, s in enumerate(self.played_by) if s >= 0)

    @property
    def unseen(self) -> int:
        """Tiles this seat cannot see: the other hands plus the boneyard."""
        return ALL_TILES_MASK & ~self.hand & ~self.played_mask

    def points_if(self, action: int) -> int:
        """Points ``action`` would score now."""
        return layout_points(self.ends, self.dbl, self.cnt, self.n_arms, action)

    def open_numbers(self) -> int:
        m = 0
        for i in range(self.n_arms):
            m |= 1 << self.ends[i]
        return m

    def sample_state(self, rng: np.random.Generator, tries: int = 200) -> GameState:
        """A full :class:`GameState` consistent with this view (hidden tiles dealt at random,
        respecting hand sizes and known-missing numbers); no event log."""
        hidden = self._sample_hidden(rng, tries)
        state = object.__new__(GameState)
        state.rules, state.n = self.rules, self.n
        state.side = tuple(self.rules.side_of(s) for s in range(self.n))
        state.rng, state.dealer, state.log, state.history = rng, None, None, []
        state.scores = list(self.scores)
        state.hand_index = self.hand_index
        state.game_over, state.winner, state.truncated = False, None, False
        state.last_domino_seat = self.last_domino_seat
        hands, boneyard = hidden
        hands[self.seat] = self.hand
        state.hands = hands
        reserve = self.boneyard_size - self.drawable
        state.boneyard = boneyard
        state.bone_pos, state.bone_end = 0, len(boneyard) - reserve
        state.played_by = list(self.played_by)
        state.lacks = list(self.lacks)
        state.ends, state.dbl, state.cnt = list(self.ends), list(self.dbl), list(self.cnt)
        state.n_arms, state.n_played = self.n_arms, self.n_played
        state.lead_tile, state.spinner = self.lead_tile, self.spinner
        state.spin_wait = self.spin_wait
        state.current, state.leader, state.forced_lead = self.current, self.leader, self.forced_lead
        state.hand_over, state.hand_result, state.deal = False, None, None
        return state

    def _sample_hidden(self, rng: np.random.Generator, tries: int) -> tuple[list[int], list[int]]:
        others = [s for s in range(self.n) if s != self.seat]
        # most constrained seats first: fewest tiles they could hold per tile needed
        unseen = mask_to_tiles(self.unseen)
        allowed = {s: [t for t in unseen if not self._lacks_tile(s, t)] for s in others}
        order = sorted(others, key=lambda s: len(allowed[s]) - self.hand_sizes[s])
        for _ in range(tries):
            pool = set(unseen)
            hands = [0] * self.n
            ok = True
            for s in order:
                choices = [t for t in allowed[s] if t in pool]
                need = self.hand_sizes[s]
                if len(choices) < need:
                    ok = False
                    break
                picked = rng.choice(len(choices), size=need, replace=False)
                for i in picked:
                    t = choices[int(i)]
                    hands[s] |= 1 << t
                    pool.discard(t)
            if ok:
                rest = list(pool)
                rng.shuffle(rest)
                return hands, [int(t) for t in rest]
        return self._sample_relaxed(rng, unseen, others)

    def _lacks_tile(self, seat: int, tile: int) -> bool:
        lacks = self.lacks[seat]
        return any(lacks >> k & 1 and SUIT_MASK[k] >> tile & 1 for k in range(N_NUMBERS))

    def _sample_relaxed(self, rng: np.random.Generator, unseen: list[int],
                        others: list[int]) -> tuple[list[int], list[int]]:
        """Fallback when rejection sampling fails: ignore the known-missing constraints."""
        pool = list(unseen)
        rng.shuffle(pool)
        hands = [0] * self.n
        for s in others:
            for _ in range(self.hand_sizes[s]):
                hands[s] |= 1 << int(pool.pop())
        return hands, [int(t) for t in pool]
