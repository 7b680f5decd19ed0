"""The ``rgb_array`` picture of a game, drawn with Pillow (see
:mod:`allfives_env.rendering.render`).

Drawn at twice the size and scaled down, so pips and corners come out smooth. The layout is
measured in tile units (a tile is 2 x 1) and shrunk to fit, so long arms always fit.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from allfives_env.game.engine import GameState
from allfives_env.game.layout import score_of
from allfives_env.game.tiles import IS_DOUBLE, N_ENDS, TILE_HIGH, TILE_LOW, mask_to_tiles
from allfives_env.rendering.render import layout_of, side_names

FELT, FELT_DARK, BAND = (14, 92, 60), (9, 62, 40), (8, 52, 34)
IVORY, IVORY_DIM, INK, LINE = (248, 244, 232), (196, 192, 180), (28, 28, 30), (120, 112, 98)
GOLD, WHITE, MUTED = (255, 206, 74), (245, 245, 240), (170, 205, 185)
SIDE_COLORS = ((86, 156, 235), (235, 110, 90), (170, 120, 230), (240, 180, 60))
SS = 2  # supersampling factor
GAP = 0.08  # gap between tiles, in tile units
_PIPS = {0: (), 1: ((0, 0),), 2: ((-1, -1), (1, 1)), 3: ((-1, -1), (0, 0), (1, 1)),
         4: ((-1, -1), (1, -1), (-1, 1), (1, 1)), 5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
         6: ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1))}


@lru_cache(maxsize=16)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in ("DejaVuSans-Bold.ttf", "DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def draw_tile(d: ImageDraw.ImageDraw, cx: float, cy: float, u: float, a: int, b: int,
              vertical: bool, outline: tuple[int, int, int] | None = None,
              fill: tuple[int, int, int] = IVORY) -> None:
    """A domino centred on (cx, cy), short side ``u``: ``a`` on top (or left), ``b`` below."""
    w, h = (u, 2 * u) if vertical else (2 * u, u)
    x0, y0, x1, y1 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
    r, sh = u * 0.16, max(1.0, u * 0.07)
    d.rounded_rectangle((x0 + sh, y0 + sh, x1 + sh, y1 + sh), r, fill=FELT_DARK)
    d.rounded_rectangle((x0, y0, x1, y1), r, fill=fill, outline=outline or LINE,
                        width=max(1, round(u * (0.1 if outline else 0.04))))
    m = u * 0.14
    if vertical:
        d.line((x0 + m, cy, x1 - m, cy), fill=LINE, width=max(1, round(u * 0.04)))
        halves = ((cx, cy - u / 2, a), (cx, cy + u / 2, b))
    else:
        d.line((cx, y0 + m, cx, y1 - m), fill=LINE, width=max(1, round(u * 0.04)))
        halves = ((cx - u / 2, cy, a), (cx + u / 2, cy, b))
    pr, off = u * 0.085, u * 0.26
    for hx, hy, v in halves:
        for px, py in _PIPS[v]:
            if not vertical:
                px, py = py, px
            x, y = hx + px * off, hy + py * off
            d.ellipse((x - pr, y - pr, x + pr, y + pr), fill=INK)


def _placements(state: GameState) -> list[tuple[float, float, bool, int, int, int]]:
    """(cx, cy, vertical, a, b, tile) in tile units, the line along y = 0."""
    lay = layout_of(state)
    out, x, spin_x = [], 0.0, None
    for k, (t, left, right) in enumerate(lay.line):
        w = 1.0 if IS_DOUBLE[t] else 2.0
        out.append((x + w / 2, 0.0, IS_DOUBLE[t], left, left if IS_DOUBLE[t] else right, t))
        if k == lay.spinner_at:
            spin_x = x + w / 2
        x += w + GAP
    if spin_x is not None:
        for arm, sign in ((lay.up, -1.0), (lay.down, 1.0)):
            y = sign * (1.0 + GAP)
            for t, near, far in arm:
                h = 1.0 if IS_DOUBLE[t] else 2.0
                a, b = (far, near) if sign < 0 else (near, far)
                out.append((spin_x, y + sign * h / 2, not IS_DOUBLE[t], a, b, t))
                y += sign * (h + GAP)
    return out


def layout_geometry(state: GameState) -> dict:
    """The layout as data, in tile units (a tile is 2 x 1, the line along y = 0): the same
    placements the picture draws, for other front ends (the web page draws it in SVG).

    ``tiles``: ``{"tile", "cx", "cy", "vertical", "a", "b"}`` with ``a`` on top (or left);
    ``bounds``: ``[x0, y0, x1, y1]`` around them (None when the table is empty);
    ``last``: the tile played last; ``spinner``: the spinner (-1 if none)."""
    places = _placements(state)
    tiles = [{"tile": t, "cx": cx, "cy": cy, "vertical": v, "a": a, "b": b}
             for cx, cy, v, a, b, t in places]
    bounds = None
    if places:
        half = [(0.5, 1.0) if p[2] else (1.0, 0.5) for p in places]
        bounds = [min(p[0] - hw for p, (hw, _) in zip(places, half)),
                  min(p[1] - hh for p, (_, hh) in zip(places, half)),
                  max(p[0] + hw for p, (hw, _) in zip(places, half)),
                  max(p[1] + hh for p, (_, hh) in zip(places, half))]
    return {"tiles": tiles, "bounds": bounds, "last": layout_of(state).last_tile,
            "spinner": state.spinner}


def _draw_layout(d: ImageDraw.ImageDraw, state: GameState, box: tuple[float, ...]) -> None:
    x0, y0, x1, y1 = box
    geo = layout_geometry(state)
    if geo["bounds"] is None:
        text = "the table is empty: the leader plays any tile"
        d.text(((x0 + x1) / 2, (y0 + y1) / 2), text, fill=MUTED, font=_font(18 * SS),
               anchor="mm")
        return
    lo_x, lo_y, hi_x, hi_y = geo["bounds"]
    u = min((x1 - x0) / (hi_x - lo_x), (y1 - y0) / (hi_y - lo_y), 44.0 * SS)
    ox = (x0 + x1) / 2 - u * (lo_x + hi_x) / 2
    oy = (y0 + y1) / 2 - u * (lo_y + hi_y) / 2
    last = geo["last"]
    for p in geo["tiles"]:
        t = p["tile"]
        outline = GOLD if t == last else ((90, 200, 255) if t == state.spinner else None)
        draw_tile(d, ox + u * p["cx"], oy + u * p["cy"], u, p["a"], p["b"], p["vertical"],
                  outline)


def _draw_header(d: ImageDraw.ImageDraw, state: GameState, w: int, to_act: int | None) -> None:
    rules = state.rules
    d.rectangle((0, 0, w, 92 * SS), fill=BAND)
    d.text((22 * SS, 16 * SS), "All Fives", fill=WHITE, font=_font(28 * SS))
    sub = (f"{rules.preset} · {rules.players} players{' in teams' if rules.teams else ''} · "
           f"to {rules.target} · hand {state.hand_index + 1}")
    d.text((22 * SS, 56 * SS), sub, fill=MUTED, font=_font(15 * SS))
    names = side_names(state)
    cw, gap = 150 * SS, 10 * SS
    x = w - 18 * SS - len(names) * (cw + gap) + gap
    for side, (name, score) in enumerate(zip(names, state.scores, strict=True)):
        active = to_act is not None and rules.side_of(to_act) == side
        color = SIDE_COLORS[side % len(SIDE_COLORS)]
        d.rounded_rectangle((x, 12 * SS, x + cw, 80 * SS), 10 * SS, fill=FELT_DARK,
                            outline=WHITE if active else color, width=(3 if active else 2) * SS)
        label = name.replace("player_", "P").replace("+", " + ") if rules.teams else name
        d.text((x + 12 * SS, 17 * SS), label, fill=color, font=_font(13 * SS))
        d.text((x + 12 * SS, 32 * SS), str(score), fill=WHITE, font=_font(24 * SS))
        if active:
            d.text((x + cw - 12 * SS, 17 * SS), "to play", fill=WHITE, font=_font(11 * SS),
                   anchor="ra")
        frac = min(1.0, max(0.0, score / rules.target))
        d.rounded_rectangle((x + 12 * SS, 62 * SS, x + cw - 12 * SS, 70 * SS), 4 * SS,
                            fill=(30, 40, 36))
        if frac > 0:
            d.rounded_rectangle((x + 12 * SS, 62 * SS, x + 12 * SS + frac * (cw - 24 * SS),
                                 70 * SS), 4 * SS, fill=color)
        x += cw + gap


def _open_ends_caption(state: GameState) -> str:
    if state.n_played == 0:
        return "open ends: none yet"
    if state.n_played == 1:  # a lone lead counts its pips once, not once per end
        total = state.open_sum()
        tail = f"  ->  scores {total}" if score_of(total) else ""
        return f"open ends: the lead alone = {total}{tail}"
    parts = [str(state.ends[i] * (2 if state.dbl[i] else 1))
             for i in range(state.n_arms) if i < 2 or state.cnt[i]]
    total = state.open_sum()
    tail = f"  ->  scores {total}" if score_of(total) else ""
    return f"open ends {' + '.join(parts)} = {total}{tail}"


def _draw_status(d: ImageDraw.ImageDraw, state: GameState, w: int, y: float) -> None:
    bone = len(state.boneyard) - state.bone_pos
    d.text((22 * SS, y), _open_ends_caption(state), fill=WHITE, font=_font(16 * SS))
    label = f"boneyard {bone}"
    font = _font(16 * SS)
    d.text((w - 22 * SS, y), label, fill=WHITE, font=font, anchor="ra")
    right = w - 22 * SS - d.textlength(label, font=font) - 12 * SS
    for k in range(min(bone, 12)):
        bx = right - 7 * SS - k * 9 * SS
        d.rounded_rectangle((bx, y + 2 * SS, bx + 7 * SS, y + 16 * SS), 2 * SS,
                            fill=(40, 40, 44), outline=(90, 90, 96))


def _draw_hand(d: ImageDraw.ImageDraw, state: GameState, viewer: int, box: tuple) -> None:
    """The viewer's tiles standing up, the legal ones raised with a gold edge."""
    x0, y0, x1, y1 = box
    tiles = mask_to_tiles(state.hands[viewer])
    legal_tiles = {a // N_ENDS for a in state.legal_actions()}
    d.text((x0, y0), f"player_{viewer} to play", fill=WHITE, font=_font(17 * SS))
    _draw_others(d, state, viewer, x1, y0)
    u = min(40.0 * SS, (x1 - x0) / max(1, len(tiles)) / 1.25)
    step = u * 1.25
    left = (x0 + x1) / 2 - step * (len(tiles) - 1) / 2
    base = (y0 + y1) / 2 + 16 * SS
    for k, t in enumerate(tiles):
        legal = t in legal_tiles
        cy = base - (u * 0.3 if legal else 0)
        draw_tile(d, left + k * step, cy, u, TILE_LOW[t], TILE_HIGH[t], True,
                  GOLD if legal else None, IVORY if legal else IVORY_DIM)


def _draw_others(d: ImageDraw.ImageDraw, state: GameState, viewer: int | None, right: float,
                 y: float) -> None:
    """Each other seat's tile count as a row of tile backs, right-aligned."""
    font = _font(13 * SS)
    for s in range(state.n):
        if s == viewer:
            continue
        n = state.hands[s].bit_count()
        x = right - n * 8 * SS
        for k in range(n):
            d.rounded_rectangle((x + k * 8 * SS, y, x + k * 8 * SS + 6 * SS, y + 13 * SS),
                                2 * SS, fill=(40, 40, 44), outline=(90, 90, 96))
        partner = state.rules.teams and viewer is not None and s % 2 == viewer % 2
        name = f"player_{s}{' (partner)' if partner else ''}"
        d.text((x - 8 * SS, y - 1 * SS), name, fill=MUTED, font=font, anchor="ra")
        y += 18 * SS


def _draw_reveal(d: ImageDraw.ImageDraw, state: GameState, box: tuple) -> None:
    """After the hand: every seat's tiles left, in small."""
    x0, y0, x1, y1 = box
    rows = state.n
    u = min(14.0 * SS, (y1 - y0) / rows / 1.25)
    font = _font(14 * SS)
    res = state.hand_result
    if res is not None:
        who = "nobody" if res["winner"] is None else side_names(state)[res["winner"]]
        text = f"hand over ({res['reason']}): {who} · end-of-hand points {res['hand_points']}"
        d.text((x1, y0), text, fill=MUTED, font=font, anchor="ra")
    for s in range(rows):
        cy = y0 + (s + 0.5) * (y1 - y0) / rows
        tiles = mask_to_tiles(state.hands[s])
        label = f"player_{s}: " + ("out" if not tiles else f"{len(tiles)} left")
        d.text((x0, cy), label, fill=WHITE, font=font, anchor="lm")
        for k, t in enumerate(tiles):
            draw_tile(d, x0 + 190 * SS + k * u * 2.2, cy, u, TILE_LOW[t], TILE_HIGH[t], False)


def _draw_banner(img: Image.Image, state: GameState, box: tuple) -> None:
    """A translucent banner with the result of the game."""
    names = side_names(state)
    if state.winner is None:
        title = "Game over: truncated, no winner"
    else:
        title = f"{names[state.winner]} wins"
    sub = "  ·  ".join(f"{nm} {sc}" for nm, sc in zip(names, state.scores, strict=True))
    overlay = Image.new("RGBA", img.size, (0, 0, 0, 0))
    d = ImageDraw.Draw(overlay)
    d.rectangle(box, fill=(0, 0, 0, 90))
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    w, h = 460 * SS, 110 * SS
    d.rounded_rectangle((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), 18 * SS,
                        fill=(6, 30, 20, 235), outline=GOLD + (255,), width=3 * SS)
    d.text((cx, cy - 18 * SS), title, fill=GOLD + (255,), font=_font(30 * SS), anchor="mm")
    d.text((cx, cy + 26 * SS), sub, fill=WHITE + (255,), font=_font(16 * SS), anchor="mm")
    img.alpha_composite(overlay)


def draw_table(state: GameState, viewer: int | None, size: tuple[int, int]) -> np.ndarray:
    """The whole picture: header, layout, status line, hand band (see the module docstring)."""
    w, h = size[0] * SS, size[1] * SS
    img = Image.new("RGBA", (w, h), FELT + (255,))
    d = ImageDraw.Draw(img)
    band = 170 * SS
    _draw_header(d, state, w, viewer)
    layout_box = (24 * SS, 106 * SS, w - 24 * SS, h - band - 40 * SS)
    _draw_layout(d, state, layout_box)
    _draw_status(d, state, w, h - band - 32 * SS)
    d.rectangle((0, h - band, w, h), fill=BAND)
    hand_box = (22 * SS, h - band + 12 * SS, w - 22 * SS, h - 10 * SS)
    if viewer is not None and not state.hand_over:
        _draw_hand(d, state, viewer, hand_box)
    else:
        _draw_reveal(d, state, hand_box)
    if state.game_over:
        _draw_banner(img, state, (0, 92 * SS, w, h - band))
    small = img.convert("RGB").resize(size, Image.Resampling.LANCZOS)
    return np.asarray(small, dtype=np.uint8).copy()


def render_rgb(state: GameState, viewer: int | None,
               size: tuple[int, int] = (960, 720)) -> np.ndarray:
    """The table as an ``(H, W, 3)`` uint8 picture."""
    return draw_table(state, viewer, size)
