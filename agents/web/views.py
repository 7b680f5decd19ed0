"""What the page is sent: a game state as JSON, for one seat or for everybody.

:func:`table_view` is the one place that decides what a browser may see. With a ``viewer``
seat and ``reveal=False`` (a person playing) it holds that seat's hand and legal moves only:
other hands are counts, other seats' draws carry no tile, and the boneyard is a count. The
hands left over are shown once a hand has ended, as at a real table. ``reveal=True`` (watching
bots, replaying a record) shows every hand.
"""

from __future__ import annotations

from typing import Any

from allfives_env.game.engine import GameState
from allfives_env.game.tiles import (
    END_NAMES,
    N_ENDS,
    TILE_HIGH,
    TILE_LOW,
    TILE_PIPS,
    mask_to_tiles,
)
from allfives_env.rendering.render import layout_of, side_names
from allfives_env.rendering.render_image import GAP, layout_geometry


def tile_json(t: int) -> list[int]:
    return [TILE_LOW[t], TILE_HIGH[t]]


def end_spots(state: GameState, geo: dict) -> dict[str, list[float]]:
    """Where the next tile on each open end would lie (centre, tile units): the targets the
    page shows for a chosen tile. ``lead`` when the table is empty."""
    if not geo["tiles"]:
        return {"lead": [0.0, 0.0]}
    lay = layout_of(state)
    line = geo["tiles"][:len(lay.line)]

    def half_w(p: dict) -> float:
        return 0.5 if p["vertical"] else 1.0

    def half_h(p: dict) -> float:
        return 1.0 if p["vertical"] else 0.5

    spots = {"left": [line[0]["cx"] - half_w(line[0]) - GAP - 1.0, 0.0],
             "right": [line[-1]["cx"] + half_w(line[-1]) + GAP + 1.0, 0.0]}
    if state.n_arms == 4 and lay.spinner_at is not None:
        spin_x = line[lay.spinner_at]["cx"]
        arms = geo["tiles"][len(lay.line):]
        up, down = arms[:len(lay.up)], arms[len(lay.up):]
        top = min((p["cy"] - half_h(p) for p in up), default=-1.0)
        bottom = max((p["cy"] + half_h(p) for p in down), default=1.0)
        spots["up"] = [spin_x, top - GAP - 1.0]
        spots["down"] = [spin_x, bottom + GAP + 1.0]
    return spots


def open_ends(state: GameState) -> list[dict[str, Any]]:
    """Each end that counts now: name, open number, and what it adds (doubles count twice)."""
    if state.n_played == 0:
        return []
    if state.n_played == 1:  # a lone lead counts its pips once
        return [{"end": "lead", "number": TILE_LOW[state.lead_tile],
                 "value": TILE_PIPS[state.lead_tile]}]
    return [{"end": END_NAMES[i + 1], "number": state.ends[i],
             "value": state.ends[i] * (2 if state.dbl[i] else 1)}
            for i in range(state.n_arms) if i < 2 or state.cnt[i]]


def event_json(ev: tuple, show_draw: bool) -> dict[str, Any]:
    """One logged event; a draw's tile only when ``show_draw``."""
    if ev[0] == "play":
        _, seat, t, end, points = ev
        return {"type": "play", "seat": seat, "tile": tile_json(t), "tile_id": t,
                "end": END_NAMES[end], "points": points}
    if ev[0] == "draw":
        out: dict[str, Any] = {"type": "draw", "seat": ev[1]}
        if show_draw:
            out["tile"] = tile_json(ev[2])
        return out
    return {"type": "pass", "seat": ev[1]}


def legal_json(state: GameState) -> list[dict[str, Any]]:
    return [{"action": a, "tile_id": a // N_ENDS, "tile": tile_json(a // N_ENDS),
             "end": END_NAMES[a % N_ENDS], "points": state.points_if(a)}
            for a in state.legal_actions()]


def table_view(state: GameState, viewer: int | None, reveal: bool) -> dict[str, Any]:
    """The table as the page draws it (see the module docstring for who sees what)."""
    rules = state.rules
    geo = layout_geometry(state)
    show_all = reveal or state.hand_over
    hands: dict[str, list[list[int]]] = {}
    for s in range(state.n):
        if show_all or s == viewer:
            hands[str(s)] = [tile_json(t) for t in mask_to_tiles(state.hands[s])]
    acting = not state.hand_over and (reveal or state.current == viewer)
    ends = open_ends(state)
    return {
        "rules": rules.to_dict(),
        "preset": rules.preset,
        "sides": side_names(state),
        "side_of": [rules.side_of(s) for s in range(state.n)],
        "hand_index": state.hand_index,
        "current": None if state.hand_over else state.current,
        "leader": state.leader,
        "scores": list(state.scores),
        "target": rules.target,
        "hand_sizes": [h.bit_count() for h in state.hands],
        "boneyard": len(state.boneyard) - state.bone_pos,
        "drawable": state.bone_end - state.bone_pos,
        "layout": geo,
        "spots": end_spots(state, geo),
        "open_ends": ends,
        "open_total": sum(e["value"] for e in ends),
        "hands": hands,
        "legal": legal_json(state) if acting else [],
        "events": [event_json(ev, reveal or ev[1] == viewer) for ev in state.log or ()],
        "hand_over": state.hand_over,
        "hand_result": state.hand_result,
        "game_over": state.game_over,
        "winner": state.winner,
        "truncated": state.truncated,
    }
