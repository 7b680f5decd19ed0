"""Agent -> module mappings for each ``policy`` mode (plain functions: Ray pickles them to its
env runners, so they live at module level and take their data through ``functools.partial``).

Agents are ``player_<seat>``. RLlib calls a mapping once per agent per episode, with the episode
(``episode.id_`` is a unique string), so a choice made from the episode id is the same for every
seat of one game.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from allfives_env.game.rules import Rules

MAIN = "main"
Mapping = Callable[..., str]


def seat_of(agent_id: str) -> int:
    """``"player_3"`` -> 3."""
    return int(str(agent_id).rsplit("_", 1)[1])


def episode_draw(episode: Any) -> int:
    """A stable non-negative integer from the episode id (the same for all its seats)."""
    return zlib.crc32(str(getattr(episode, "id_", episode)).encode())


def shared(agent_id: str, episode: Any = None, **_: Any) -> str:
    return MAIN


def shared_pool(agent_id: str, episode: Any = None, *, snapshots: Sequence[str], **_: Any
                ) -> str:
    """``main`` for ``player_<seat>``; for ``opponent_<seat>`` (the table env's seats played
    by a snapshot) one snapshot per game, drawn from the episode id."""
    if not str(agent_id).startswith("opponent_"):
        return MAIN
    return snapshots[episode_draw(episode) % len(snapshots)]


def per_module(agent_id: str, episode: Any = None, *, modules: Sequence[str], **_: Any) -> str:
    """``modules[seat]``: one module per seat, or per side (partners share one)."""
    return modules[seat_of(agent_id)]


def selfplay(agent_id: str, episode: Any = None, *, seat_side: Sequence[int],
             snapshots: Sequence[str], **_: Any) -> str:
    """``main`` plays one side of the game, a frozen snapshot all the others; the side and the
    snapshot are drawn from the episode id."""
    draw = episode_draw(episode)
    n_sides = max(seat_side) + 1
    main_side = draw % n_sides
    if seat_side[seat_of(agent_id)] == main_side:
        return MAIN
    return snapshots[(draw // n_sides) % len(snapshots)]


def seat_modules(policy: str, rules: Rules) -> list[str]:
    """Per seat, the module that plays it when the module itself is played back (for
    ``selfplay`` and ``shared``: ``main`` everywhere)."""
    n = rules.players
    if policy == "per_seat":
        return [f"seat_{s}" for s in range(n)]
    if policy == "per_side":
        return [f"side_{rules.side_of(s)}" for s in range(n)]
    return [MAIN] * n


def trained_modules(policy: str, rules: Rules) -> list[str]:
    """The modules that learn (no duplicates, in seat order)."""
    return list(dict.fromkeys(seat_modules(policy, rules)))


def snapshot_id(k: int) -> str:
    return f"snap_{k}"


def make_mapping(policy: str, rules: Rules, snapshots: Sequence[str] = ()) -> Mapping:
    """The agent -> module mapping function of a ``policy`` mode (``snapshots``: the current
    snapshot pool; selfplay needs at least one, ``shared`` uses them for the table env's
    ``opponent_<seat>`` agents)."""
    if policy == "shared":
        return functools.partial(shared_pool, snapshots=tuple(snapshots)) if snapshots \
            else shared
    if policy in ("per_seat", "per_side"):
        return functools.partial(per_module, modules=tuple(seat_modules(policy, rules)))
    if policy == "selfplay":
        if not snapshots:
            raise ValueError("selfplay needs at least one snapshot module")
        sides = tuple(rules.side_of(s) for s in range(rules.players))
        return functools.partial(selfplay, seat_side=sides, snapshots=tuple(snapshots))
    raise ValueError(f"policy {policy!r}: allowed are shared, per_seat, per_side, selfplay")
