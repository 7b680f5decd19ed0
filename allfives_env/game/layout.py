"""Layout arithmetic: what a move scores and what is open after it (docs/rules.md).

The layout has four arms ``left, right, up, down`` (arm index 0..3 = end index 1..4).
``ends[i]`` is the number open on arm i, ``dbl[i]`` whether the exposed tile there is a
double (it counts both halves), ``cnt[i]`` how many tiles lie on the arm. ``up``/``down``
exist once the spinner's two sides are covered (``n_arms == 4``); an arm with no tile yet
counts nothing. ``spinner`` is the spinner tile (-1: none yet) and ``spin_wait`` which side
still waits to be covered before its ends open (:data:`SPIN_LEAD`: the lead spinner, both
sides; :data:`SPIN_NONE`: nothing waits).

This module is the one place that knows these rules: the engine, the seat views, the bots,
the observation and the renderers all ask it. The engine's ``apply`` keeps a hand-inlined
copy of :func:`layout_after` on its hot path; ``tests/test_layout.py`` pins the two together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from allfives_env.game.tiles import (
    IS_DOUBLE,
    LEAD,
    N_ENDS,
    N_NUMBERS,
    OTHER_HALF,
    TILE_HIGH,
    TILE_LOW,
    TILE_PIPS,
)

SPIN_NONE, SPIN_LEAD = -1, 4  # spin_wait: nothing waits / the lead spinner waits on both sides


def score_of(total: int) -> int:
    """The points an open-end total scores: itself when a positive multiple of 5, else 0."""
    return total if total > 0 and total % 5 == 0 else 0


class Layout(NamedTuple):
    """A layout as plain values (see the module docstring)."""

    ends: list[int]
    dbl: list[bool]
    cnt: list[int]
    n_arms: int
    spinner: int
    spin_wait: int


class HasLayout(Protocol):
    """Anything with the layout fields: :class:`GameState`, :class:`SeatView`, :class:`Layout`."""

    @property
    def ends(self) -> Sequence[int]: ...
    @property
    def dbl(self) -> Sequence[bool]: ...
    @property
    def cnt(self) -> Sequence[int]: ...
    @property
    def n_arms(self) -> int: ...
    @property
    def spinner(self) -> int: ...
    @property
    def spin_wait(self) -> int: ...


def arm_count(ends: Sequence[int], dbl: Sequence[bool], cnt: Sequence[int], i: int) -> int:
    """What arm ``i`` adds to the open-end total (0 for an up/down arm with no tile yet)."""
    if i < 2 or cnt[i]:
        return ends[i] * (2 if dbl[i] else 1)
    return 0


def open_total(ends: Sequence[int], dbl: Sequence[bool], cnt: Sequence[int], n_arms: int
               ) -> int:
    """The open-end total of a layout after the lead's first neighbour (see
    :func:`lead_total` for a lone lead): :func:`arm_count` summed over the arms, written out
    (``observe`` calls it for every observation)."""
    if not n_arms:
        return 0
    total = ends[0] * (1 + dbl[0]) + ends[1] * (1 + dbl[1])
    if n_arms == 4:
        if cnt[2]:
            total += ends[2] * (1 + dbl[2])
        if cnt[3]:
            total += ends[3] * (1 + dbl[3])
    return total


def lead_total(tile: int) -> int:
    """A lone lead counts its pips once: ``[5,5]`` leads for 10."""
    return TILE_PIPS[tile]


def layout_points(ends: Sequence[int], dbl: Sequence[bool], cnt: Sequence[int], n_arms: int,
                  action: int) -> int:
    """Points that ``action`` scores on the layout (ends, dbl, cnt, n_arms)."""
    t, end = divmod(action, N_ENDS)
    if end == LEAD:
        return score_of(lead_total(t))
    i, total = end - 1, 0
    for j in range(n_arms):
        if j == i:
            total += OTHER_HALF[t * 7 + ends[j]] * (2 if IS_DOUBLE[t] else 1)
        elif j < 2 or cnt[j]:
            total += ends[j] * (1 + dbl[j])
    return score_of(total)


def layout_after(src: HasLayout, action: int, spinner_rule: bool) -> Layout:
    """The layout after ``action`` (the ``spinner`` rule option says whether the first double
    becomes a spinner)."""
    t, end = divmod(action, N_ENDS)
    ends, dbl, cnt = list(src.ends), list(src.dbl), list(src.cnt)
    n_arms, spinner, wait = src.n_arms, src.spinner, src.spin_wait
    double = IS_DOUBLE[t]
    if end == LEAD:
        ends[0], ends[1] = TILE_LOW[t], TILE_HIGH[t]
        dbl[0] = dbl[1] = double
        if double and spinner_rule:
            spinner, wait = t, SPIN_LEAD
        return Layout(ends, dbl, cnt, 2, spinner, wait)
    i = end - 1
    ends[i] = OTHER_HALF[t * N_NUMBERS + ends[i]]
    dbl[i] = double
    cnt[i] += 1
    if wait == i or (wait == SPIN_LEAD and cnt[0] and cnt[1]):
        ends[2] = ends[3] = TILE_LOW[spinner]
        n_arms, wait = 4, SPIN_NONE
    elif double and spinner < 0 and spinner_rule:
        spinner, wait = t, i
    return Layout(ends, dbl, cnt, n_arms, spinner, wait)
