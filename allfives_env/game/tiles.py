"""Tiles, ends and the fixed action table.

A double-six set has 28 tiles ``[a, b]`` with ``0 <= a <= b <= 6``; tile ``t`` is indexed in
the order ``[0,0], [0,1], ..., [0,6], [1,1], ..., [6,6]``. Sets of tiles are 28-bit integers
(bit ``t`` set when tile ``t`` is in the set), which makes hands cheap to copy and test.

An action is a pair (tile, end), independent of the seat that plays it:
``action = tile * N_ENDS + end`` with ends ``lead, left, right, up, down``. Lookup arrays
``ACTION_TILE`` and ``ACTION_END`` undo it.
"""

from __future__ import annotations

N_NUMBERS = 7
N_TILES = 28
END_NAMES: tuple[str, ...] = ("lead", "left", "right", "up", "down")
LEAD, LEFT, RIGHT, UP, DOWN = range(5)
N_ENDS = len(END_NAMES)
ARMS: tuple[int, ...] = (LEFT, RIGHT, UP, DOWN)
N_ACTIONS = N_TILES * N_ENDS
END_INDEX: dict[str, int] = {name: i for i, name in enumerate(END_NAMES)}

TILES: tuple[tuple[int, int], ...] = tuple(
    (a, b) for a in range(N_NUMBERS) for b in range(a, N_NUMBERS)
)
TILE_INDEX: dict[tuple[int, int], int] = {}
for _t, (_a, _b) in enumerate(TILES):
    TILE_INDEX[(_a, _b)] = _t
    TILE_INDEX[(_b, _a)] = _t

TILE_LOW: tuple[int, ...] = tuple(a for a, _ in TILES)
TILE_HIGH: tuple[int, ...] = tuple(b for _, b in TILES)
TILE_PIPS: tuple[int, ...] = tuple(a + b for a, b in TILES)
IS_DOUBLE: tuple[bool, ...] = tuple(a == b for a, b in TILES)
ALL_TILES_MASK = (1 << N_TILES) - 1
DOUBLES_MASK = sum(1 << t for t in range(N_TILES) if IS_DOUBLE[t])

#: SUIT_MASK[n]: the set of tiles that carry number ``n`` on either half.
SUIT_MASK: tuple[int, ...] = tuple(
    sum(1 << t for t, (a, b) in enumerate(TILES) if n in (a, b)) for n in range(N_NUMBERS)
)
#: OTHER_HALF[t * 7 + n]: the half of tile t that stays open when it is matched on number n.
OTHER_HALF: tuple[int, ...] = tuple(
    (TILES[t][1] if TILES[t][0] == n else TILES[t][0]) if n in TILES[t] else -1
    for t in range(N_TILES)
    for n in range(N_NUMBERS)
)

ACTION_TILE: tuple[int, ...] = tuple(a // N_ENDS for a in range(N_ACTIONS))
ACTION_END: tuple[int, ...] = tuple(a % N_ENDS for a in range(N_ACTIONS))


def action_id(tile: int, end: int) -> int:
    """The action index of playing ``tile`` on ``end``."""
    return tile * N_ENDS + end


def tile_str(tile: int) -> str:
    a, b = TILES[tile]
    return f"[{a}|{b}]"


def action_to_str(action: int) -> str:
    """``'[2|5]@left'`` for the action that plays tile [2,5] on the left end."""
    if not 0 <= action < N_ACTIONS:
        raise ValueError(f"action {action!r} is out of range: actions are 0..{N_ACTIONS - 1}")
    return f"{tile_str(ACTION_TILE[action])}@{END_NAMES[ACTION_END[action]]}"


def str_to_action(text: str) -> int:
    """Parse ``'2-5 left'``, ``'[2|5]@left'`` or ``'25l'`` style input into an action."""
    cleaned = text.strip().lower()
    for ch in "[]|@,-:/":
        cleaned = cleaned.replace(ch, " ")
    parts = cleaned.split()
    if len(parts) == 1 and len(parts[0]) >= 3 and parts[0][:2].isdigit():
        parts = [parts[0][0], parts[0][1], parts[0][2:]]
    elif len(parts) == 2 and len(parts[0]) == 2 and parts[0].isdigit():
        parts = [parts[0][0], parts[0][1], parts[1]]
    if len(parts) != 3 or not (parts[0].isdigit() and parts[1].isdigit()):
        raise ValueError(f"cannot read {text!r}: write a tile and an end, e.g. '2-5 left'")
    a, b, end = int(parts[0]), int(parts[1]), parts[2]
    if (a, b) not in TILE_INDEX:
        raise ValueError(f"{text!r}: tile halves must be 0..6")
    matches = [i for i, name in enumerate(END_NAMES) if name.startswith(end)]
    if len(matches) != 1:
        raise ValueError(f"{text!r}: end must be one of {', '.join(END_NAMES)}")
    return action_id(TILE_INDEX[(a, b)], matches[0])


def mask_to_tiles(mask: int) -> list[int]:
    """The tile indices in a tile set, in increasing order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def tiles_to_mask(tiles: list[int]) -> int:
    mask = 0
    for t in tiles:
        mask |= 1 << t
    return mask


def pips_of(mask: int) -> int:
    """Total pips of a tile set."""
    return sum(TILE_PIPS[t] for t in mask_to_tiles(mask))


def round5(pips: int) -> int:
    """Round to the nearest multiple of 5: remainder 1-2 down, 3-4 up."""
    return 5 * ((pips + 2) // 5)
