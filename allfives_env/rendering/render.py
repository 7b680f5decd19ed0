"""Pictures of a game: ``render_ansi`` (text) here, ``render_rgb`` (an RGB array, via Pillow)
in :mod:`allfives_env.rendering.render_image`.

Both draw the layout as a cross around the spinner: the left arm, the lead and the right arm
in a row, the spinner's ``up`` and ``down`` arms in a column through it. Doubles lie
crosswise. Under the layout: the open ends and their total, scores, the boneyard, and the
hand of the viewer (the seat to act; nobody's hand after the game ended). The layout is
rebuilt from the hand's event log, so the state must keep one (``GameState(log=True)``, the
default); without it only the open ends are shown.
"""

from __future__ import annotations

import dataclasses

from allfives_env.game.engine import GameState
from allfives_env.game.layout import score_of
from allfives_env.game.tiles import (
    END_NAMES,
    IS_DOUBLE,
    LEAD,
    OTHER_HALF,
    TILE_HIGH,
    TILE_LOW,
    action_to_str,
    mask_to_tiles,
    tile_str,
)


@dataclasses.dataclass
class Layout:
    """The tiles on the table. ``line``: left to right, ``(tile, left number, right number)``;
    ``up`` / ``down``: from the spinner outward, ``(tile, near number, far number)``."""

    line: list[tuple[int, int, int]]
    spinner_at: int | None  # index in ``line`` of the spinner
    up: list[tuple[int, int, int]]
    down: list[tuple[int, int, int]]
    last_tile: int | None


def layout_of(state: GameState) -> Layout:
    """Rebuild the layout of the current hand from ``state.log``."""
    arms: list[list[tuple[int, int, int]]] = [[], [], [], []]
    lead: tuple[int, int, int] | None = None
    spin_num = TILE_LOW[state.spinner] if state.spinner >= 0 else 0
    cur = [0, 0, spin_num, spin_num]
    last = None
    for ev in state.log or ():
        if ev[0] != "play":
            continue
        t, end = ev[2], ev[3]
        last = t
        if end == LEAD:
            lead = (t, TILE_LOW[t], TILE_HIGH[t])
            cur[0], cur[1] = TILE_LOW[t], TILE_HIGH[t]
            continue
        i = end - 1
        near = cur[i]
        far = OTHER_HALF[t * 7 + near]
        arms[i].append((t, near, far))
        cur[i] = far
    line = [(t, far, near) for t, near, far in reversed(arms[0])]
    line += [lead] if lead is not None else []
    line += [(t, near, far) for t, near, far in arms[1]]
    spinner_at = next((k for k, item in enumerate(line) if item[0] == state.spinner), None)
    return Layout(line, spinner_at, arms[2], arms[3], last)


def open_ends_text(state: GameState) -> str:
    if state.n_played == 0:
        return "the layout is empty: the leader plays any tile"
    if state.n_played == 1:  # a lone lead counts its pips once, not once per end
        total = state.open_sum()
        mark = "  <- scores" if score_of(total) else ""
        return f"open ends: the lead {tile_str(state.lead_tile)} alone; total {total}{mark}"
    names = END_NAMES[1:1 + state.n_arms]
    parts = []
    for i, name in enumerate(names):
        if i < 2 or state.cnt[i]:
            v = state.ends[i] * (2 if state.dbl[i] else 1)
            parts.append(f"{name} {v}")
        else:
            parts.append(f"{name} (empty)")
    total = state.open_sum()
    mark = "  <- scores" if score_of(total) else ""
    return f"open ends: {', '.join(parts)}; total {total}{mark}"


def side_names(state: GameState) -> list[str]:
    rules = state.rules
    return ([f"player_{s}+player_{s + 2}" for s in range(2)] if rules.teams
            else [f"player_{s}" for s in range(rules.players)])


def status_lines(state: GameState, viewer: int | None) -> list[str]:
    """Title, scores, boneyard, hand sizes, result: the text around the layout."""
    rules = state.rules
    names = side_names(state)
    scores = "   ".join(f"{nm} {sc}" for nm, sc in zip(names, state.scores, strict=True))
    sizes = "  ".join(f"player_{s}: {h.bit_count()}" for s, h in enumerate(state.hands))
    lines = [f"All Fives ({rules.preset}, {rules.players} players"
             f"{', teams' if rules.teams else ''}, target {rules.target})  hand "
             f"{state.hand_index + 1}",
             f"scores: {scores}",
             f"boneyard: {len(state.boneyard) - state.bone_pos} tiles "
             f"({state.bone_end - state.bone_pos} drawable)   tiles in hand: {sizes}"]
    if state.game_over:
        who = "nobody (truncated)" if state.winner is None else names[state.winner]
        lines.append(f"game over: {who} wins")
    elif state.hand_over and state.hand_result is not None:
        res = state.hand_result
        lines.append(f"hand over ({res['reason']}): end-of-hand points {res['hand_points']}")
    if viewer is not None and not state.hand_over:
        hand = [tile_str(t) for t in mask_to_tiles(state.hands[viewer])]
        lines += wrap_items(f"player_{viewer} to play; hand: ", hand, " ")
        lines += wrap_items("legal: ", [_legal_text(state, a) for a in state.legal_actions()],
                            ", ")
    return lines


def wrap_items(head: str, items: list[str], sep: str, width: int = 100) -> list[str]:
    """``head`` then ``items`` joined by ``sep``, in lines of at most ``width`` columns that
    never split an item; continuation lines are indented by four spaces."""
    lines, cur = [], head
    for k, item in enumerate(items):
        piece = item + (sep.rstrip() if k < len(items) - 1 else "")
        if cur.strip() and len(cur) + len(piece) > width:
            lines.append(cur.rstrip())
            cur = "    "
        cur += piece + (" " if k < len(items) - 1 else "")
    lines.append(cur.rstrip())
    return lines


def _legal_text(state: GameState, a: int) -> str:
    p = state.points_if(a)
    return f"{a} {action_to_str(a)}" + (f" (+{p})" if p else "")


# ---------------------------------------------------------------------- text
def _put(grid: dict[tuple[int, int], str], row: int, col: int, text: str) -> None:
    for k, ch in enumerate(text):
        grid[(row, col + k)] = ch


def _vertical(grid: dict[tuple[int, int], str], top: int, col: int, a: int, b: int,
              bar: str = "─") -> None:
    """A tile standing up: ``a`` over ``b``, three rows (a double lying across the row gets
    the doubled bar ``═``)."""
    _put(grid, top, col, str(a))
    _put(grid, top + 1, col, bar)
    _put(grid, top + 2, col, str(b))


def layout_text(state: GameState) -> list[str]:
    """The layout as text rows: the line on one row, the spinner's arms standing up through it.
    Doubles lie crosswise and are drawn with a doubled bar: ``5/═/5`` across the row,
    ``[5‖5]`` across an arm, so they never look like the arms' ``6/─/5`` tiles."""
    lay = layout_of(state)
    grid: dict[tuple[int, int], str] = {}
    col, spin_col = 0, None
    for k, (t, left, right) in enumerate(lay.line):
        if IS_DOUBLE[t]:
            _vertical(grid, -1, col + 1, left, left, "═")
            if k == lay.spinner_at:
                spin_col = col + 1
            col += 3
        else:
            _put(grid, 0, col, f"[{left}|{right}]")
            col += 5
    if spin_col is not None:
        row = -2
        for t, near, far in lay.up:
            if IS_DOUBLE[t]:
                _put(grid, row, spin_col - 2, f"[{far}‖{far}]")
                row -= 1
            else:
                _vertical(grid, row - 2, spin_col, far, near)
                row -= 3
        row = 2
        for t, near, far in lay.down:
            if IS_DOUBLE[t]:
                _put(grid, row, spin_col - 2, f"[{far}‖{far}]")
                row += 1
            else:
                _vertical(grid, row, spin_col, near, far)
                row += 3
    if not grid:
        return ["(no tiles on the table)"]
    rows = sorted({r for r, _ in grid})
    left_col = min(c for _, c in grid)
    width = max(c for _, c in grid) - left_col + 1
    out = []
    for r in range(rows[0], rows[-1] + 1):
        chars = [" "] * width
        for (rr, c), ch in grid.items():
            if rr == r:
                chars[c - left_col] = ch
        out.append("  " + "".join(chars).rstrip())
    return out


def render_ansi(state: GameState, viewer: int | None) -> str:
    """The table as text: status, the layout cross, open ends, the viewer's hand."""
    head = status_lines(state, viewer)
    body = layout_text(state) if state.log is not None else ["(layout not logged)"]
    return "\n".join(head[:3] + [""] + body + ["", open_ends_text(state)] + head[3:]) + "\n"
