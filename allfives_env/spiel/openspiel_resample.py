"""Sampling a world in one player's information state (``resample_from_infostate``).

For a match played from the deal (the usual case), the hidden tiles of the current hand are
re-dealt and the hand is replayed:

1. :meth:`SeatView.sample_state` deals the other seats' current hands from the tiles the
   player cannot see, respecting hand sizes and the numbers each seat is known to lack.
2. Each other seat's history is rebuilt around them: a draw followed by that seat's play drew
   the tile it played; every other draw (a kept draw) gets a tile from the seat's current
   hand or its later plays that did not match the open ends at that moment; what is left
   was dealt.
3. The current hand is replayed from its start with those chance outcomes and the real
   plays; the sample is kept only if every play is legal and the player's information state
   string comes out identical (so the sample is exactly consistent with what the player saw,
   draws, passes and forced leads included). Otherwise try again, up to ``tries`` times;
   then the match itself is returned (counted in :data:`FALLBACKS`).

Earlier hands are kept as they were: nothing hidden in them affects the rest of the game.
A match made from a seat's view (:meth:`Match.from_world`) is resampled from that view.
Outside decision nodes the match itself (a copy) is returned.
"""

from __future__ import annotations

import numpy as np

from allfives_env.game.tiles import TILE_HIGH, TILE_LOW, mask_to_tiles
from allfives_env.game.view import SeatView
from allfives_env.spiel.openspiel_core import DEAL, DRAW, LEADER, PLAY, Match, view_tokens

FALLBACKS = {"resamples": 0, "fallbacks": 0}


def resample(m: Match, player: int, rng: np.random.Generator, tries: int = 100) -> Match:
    """A match in ``player``'s information state (see the module docstring)."""
    if m.phase != PLAY:
        return m.copy()
    view = SeatView.of(m.g, player)
    FALLBACKS["resamples"] += 1
    if m.from_view:
        world = view.sample_state(rng)
        tokens = [m.tokens[q] if q == player else [view_tokens(SeatView.of(world, q))]
                  for q in range(m.n)]
        return Match.from_world(world, m.reward, tokens)
    for _ in range(tries):
        acts = _propose(m, player, view.sample_state(rng).hands, rng)
        new = _replay(m, acts) if acts is not None else None
        if (new is not None and new.phase == PLAY and new.g.current == m.g.current
                and new.tokens[player] == m.tokens[player]):
            return new
    FALLBACKS["fallbacks"] += 1
    return m.copy()


def _carries(tile: int, numbers: int) -> bool:
    return bool(numbers >> TILE_LOW[tile] & 1 or numbers >> TILE_HIGH[tile] & 1)


def _propose(m: Match, player: int, hands: list[int], rng: np.random.Generator
             ) -> list[tuple] | None:
    """The current hand's actions with the other seats' deals and draws re-sampled."""
    acts, n = m.acts, m.n
    last = len(acts) - 1
    forced = {i for i, a in enumerate(acts)
              if a[0] == "draw" and i < last and acts[i + 1][0] == "play"
              and acts[i + 1][1] == a[1]}
    pending_forced = last if acts and acts[-1][0] == "draw" else -1
    tiles_for: dict[int, int] = {}  # draw index -> tile
    dealt: dict[int, list[int]] = {player: []}
    for s in range(n):
        if s == player:
            continue
        got = _seat_history(m, s, hands[s], forced, pending_forced, rng)
        if got is None:
            return None
        dealt[s], draws = got
        tiles_for.update(draws)
    out: list[tuple] = []
    for i, a in enumerate(acts):
        if a[0] == "deal" and a[1] != player:
            out.append(("deal", a[1], dealt[a[1]].pop()))
        elif a[0] == "draw" and a[1] != player:
            tile = acts[i + 1][2] // 5 if i in forced else tiles_for[i]
            out.append(("draw", a[1], tile, a[3]))
        else:
            out.append(a)
    return out


def _seat_history(m: Match, s: int, hand: int, forced: set[int], pending: int,
                  rng: np.random.Generator) -> tuple[list[int], dict[int, int]] | None:
    """Seat ``s``'s dealt tiles and kept draws, built around its sampled current ``hand``."""
    acts = m.acts
    forced_plays = {i + 1 for i in forced}
    play_at = {a[2] // 5: i for i, a in enumerate(acts)
               if a[0] == "play" and a[1] == s and i not in forced_plays}
    pool = mask_to_tiles(hand) + list(play_at)
    used: set[int] = set()
    draws: dict[int, int] = {}
    for i, a in enumerate(acts):
        if a[0] != "draw" or a[1] != s or i in forced:
            continue
        must_match = i == pending
        cands = [t for t in pool if t not in used and play_at.get(t, len(acts)) > i
                 and _carries(t, a[3]) == must_match]
        if not cands:
            return None
        t = cands[int(rng.integers(len(cands)))]
        used.add(t)
        draws[i] = t
    dealt = [t for t in pool if t not in used]
    if len(dealt) != m.rules.hand_size:
        return None
    rng.shuffle(dealt)
    return dealt, draws


def _rewound(m: Match) -> Match:
    """``m`` at the start of its current hand, before the deal."""
    new = object.__new__(Match)
    for name in ("rules", "reward", "n"):
        setattr(new, name, getattr(m, name))
    new.game, new.base, new.pending, new.log0, new.from_view = m.start, None, -1, 0, False
    new.tokens = [t[:k] for t, k in zip(m.tokens, m.mark)]
    new.deals = m.deals[:]
    new._new_hand()
    return new


def _replay(m: Match, acts: list[tuple]) -> Match | None:
    """Replay the current hand with ``acts``; None when they do not fit the rules."""
    new = _rewound(m)
    try:
        for a in acts:
            kind = a[0]
            if kind == "play":
                if new.phase != PLAY or new.g.current != a[1]:
                    return None
                new.apply_play(a[2])
            elif kind == "draw":
                if new.phase != DRAW or new.drawer() != a[1]:
                    return None
                if a[2] not in new.chance_outcomes():
                    return None
                new.apply_chance(a[2])
            elif kind == "deal":
                if new.phase != DEAL:
                    return None
                new.apply_chance(a[2])
            else:
                if new.phase != LEADER:
                    return None
                new.apply_chance(a[1])
    except ValueError:
        return None
    return new
