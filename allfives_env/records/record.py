"""Game records, format ``allfives-record/1`` (docs/rules.md): write, read, replay, verify."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from allfives_env.game.engine import Deal, GameState
from allfives_env.game.tiles import (
    END_INDEX,
    END_NAMES,
    LEFT,
    RIGHT,
    TILE_HIGH,
    TILE_INDEX,
    TILE_LOW,
    action_id,
)
from allfives_env.inputs.safeyaml import loads
from allfives_env.records.record_schema import FORMAT, RecordError, RecordSchemaError, validate

__all__ = ["FORMAT", "RecordError", "RecordSchemaError", "game_record", "read_records",
           "read_located", "replay", "validate", "verify", "write_records"]


def tile_json(t: int) -> list[int]:
    return [TILE_LOW[t], TILE_HIGH[t]]


def _event_json(ev: tuple) -> dict[str, Any]:
    if ev[0] == "play":
        _, seat, t, end, points = ev
        return {"type": "play", "seat": seat, "tile": tile_json(t), "end": END_NAMES[end],
                "points": points}
    if ev[0] == "draw":
        return {"type": "draw", "seat": ev[1], "tile": tile_json(ev[2])}
    return {"type": "pass", "seat": ev[1]}


def _hand_json(h: dict) -> dict[str, Any]:
    deal: Deal = h["deal"]
    return {
        "leader": h["leader"],
        "deal": [[tile_json(t) for t in hand] for hand in deal.hands],
        "boneyard": [tile_json(t) for t in deal.boneyard],
        "events": [_event_json(ev) for ev in h["events"]],
        "result": dict(h["result"]),
        "scores": list(h["scores"]),
    }


def game_record(state: GameState, seed: int | None = None,
                agents: Sequence[str] | None = None) -> dict[str, Any]:
    """The record of ``state``'s game so far (hands that have ended)."""
    if state.log is None:
        raise ValueError("this GameState was made with log=False and cannot write a record")
    return {
        "format": FORMAT,
        "rules": state.rules.to_dict(),
        "seed": seed,
        "agents": list(agents) if agents is not None else ["unknown"] * state.n,
        "hands": [_hand_json(h) for h in state.history],
        "final_scores": list(state.scores),
        "winner": state.winner,
        "truncated": state.truncated,
    }


# ---------------------------------------------------------------------- replay
def _tile(value: Any, where: str) -> int:
    try:
        return TILE_INDEX[(int(value[0]), int(value[1]))]
    except (KeyError, TypeError, ValueError, IndexError):
        raise RecordError(f"{where}: {value!r} is not a tile [a, b] with 0 <= a, b <= 6") from None


def _parse_deal(hand: dict, where: str, players: int, hand_size: int) -> Deal:
    try:
        hands = [[_tile(t, where) for t in seat] for seat in hand["deal"]]
        boneyard = [_tile(t, where) for t in hand["boneyard"]]
        leader = int(hand["leader"])
    except (KeyError, TypeError) as exc:
        raise RecordError(f"{where}: missing or malformed deal/boneyard/leader ({exc})") from None
    if [len(h) for h in hands] != [hand_size] * players:
        raise RecordError(f"{where}: the rules deal {hand_size} tiles to each of {players} "
                          f"seats; the deal has {[len(h) for h in hands]}")
    tiles = [t for h in hands for t in h] + boneyard
    if sorted(tiles) != list(range(28)):
        raise RecordError(f"{where}: deal plus boneyard must be the 28 tiles, each once")
    return Deal(hands, boneyard, leader)


def replay(record: dict[str, Any]) -> GameState:
    """Replay a record's events from its deals; raise :class:`RecordError` at the first
    event, result or score that the rules do not reproduce (:class:`RecordSchemaError`, a
    RecordError, when it is not an ``allfives-record/1`` record at all: see
    :func:`allfives_env.records.record_schema.validate`). Returns the final state."""
    rules = validate(record)
    hands = record["hands"]
    deals = [_parse_deal(h, f"hand {i}", rules.players, rules.hand_size)
             for i, h in enumerate(hands)]
    state = GameState(rules, dealer=lambda k, _rng: deals[k] if k < len(deals) else _missing(k))
    for k, hand in enumerate(hands):
        if k > 0:
            if state.game_over:
                raise RecordError(f"hand {k}: the game was already over")
            state.next_hand()
        _replay_hand(state, hand, f"hand {k}")
    if not state.game_over and not record.get("truncated"):
        raise RecordError("the record ends before the game does")
    for key, want in (("final_scores", state.scores), ("winner", state.winner),
                      ("truncated", state.truncated)):
        if record.get(key) != want:
            raise RecordError(f"{key}: record says {record.get(key)!r}, replay gives {want!r}")
    return state


def _missing(k: int) -> Deal:
    raise RecordError(f"the game goes on to hand {k} but the record has no deal for it")


def _replay_hand(state: GameState, hand: dict, where: str) -> None:
    if hand["leader"] != state.leader:
        raise RecordError(f"{where}: leader {hand['leader']} breaks the leader rule "
                          f"({state.leader} must lead)")
    events = hand.get("events") or []
    flip = False
    if events and events[0].get("type") == "play" and events[0].get("end") == "lead":
        a, b = events[0]["tile"]
        flip = a > b
    for j, ev in enumerate(events):
        if ev.get("type") != "play":
            continue
        end = END_INDEX.get(str(ev.get("end")), -1)
        if end < 0:
            raise RecordError(f"{where} event {j}: unknown end {ev.get('end')!r}")
        if flip and end in (LEFT, RIGHT):
            end = LEFT + RIGHT - end
        action = action_id(_tile(ev.get("tile"), f"{where} event {j}"), end)
        if state.hand_over:
            raise RecordError(f"{where} event {j}: the hand was already over")
        if ev.get("seat") != state.current:
            raise RecordError(f"{where} event {j}: field 'seat': seat {ev.get('seat')} plays "
                              f"but seat {state.current} is to act")
        try:
            state.play(action)
        except ValueError as exc:
            raise RecordError(f"{where} event {j}: {exc}") from None
    if not state.hand_over:
        raise RecordError(f"{where}: the events stop before the hand ends")
    _compare_hand(state.history[-1], hand, flip, where)


def _normal_event(ev: dict, flip: bool) -> tuple:
    kind = ev.get("type")
    if kind == "pass":
        return ("pass", ev.get("seat"))
    t = TILE_INDEX.get(tuple(ev.get("tile", ())), -1)
    if kind == "draw":
        return ("draw", ev.get("seat"), t)
    end = END_INDEX.get(str(ev.get("end")), -1)
    if flip and end in (LEFT, RIGHT):
        end = LEFT + RIGHT - end
    return ("play", ev.get("seat"), t, end, ev.get("points"))


def _first_difference(recorded: dict, rules_give: dict, rec: tuple, got: tuple) -> str:
    """The name of the first event field in which the record and the rules differ."""
    names = ("type", "seat", "tile", "end", "points")
    for name, a, b in zip(names, rec, got):
        if a != b:
            return name
    return next((n for n in names if recorded.get(n) != rules_give.get(n)), "type")


def _compare_hand(done: dict, hand: dict, flip: bool, where: str) -> None:
    want = [_normal_event(e, flip) for e in hand["events"]]
    for j, (got, rec) in enumerate(zip(done["events"], want)):
        if tuple(got) != rec:
            field = _first_difference(hand["events"][j], _event_json(got), rec, tuple(got))
            raise RecordError(f"{where} event {j}: field {field!r}: record has "
                              f"{hand['events'][j]!r}, the rules give {_event_json(got)!r}")
    if len(want) != len(done["events"]):
        raise RecordError(f"{where}: record has {len(want)} events, the rules give "
                          f"{len(done['events'])}")
    if hand.get("result") != done["result"]:
        raise RecordError(f"{where}: result {hand.get('result')!r}, replay gives "
                          f"{done['result']!r}")
    if hand.get("scores") != done["scores"]:
        raise RecordError(f"{where}: scores {hand.get('scores')!r}, replay gives "
                          f"{done['scores']!r}")


def verify(record: dict[str, Any]) -> None:
    """Raise :class:`RecordError` unless the record replays exactly."""
    replay(record)


# ---------------------------------------------------------------------- files
def write_records(path: str | Path, records: Sequence[dict[str, Any]]) -> None:
    """Write records as JSON Lines, atomically (a hidden temp file beside ``path`` renamed
    into place, removed on failure: :func:`allfives_env.inputs.paths.atomic_write`)."""
    from allfives_env.inputs.paths import atomic_write

    with atomic_write(path) as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSON Lines file (or one JSON document), with clear errors."""
    for _line, record in read_located(path):
        yield record


def read_located(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for each JSON value of a JSON Lines file (or ``(1, value)`` for a
    file that is one JSON object). A file that is not UTF-8 text, a line that is not JSON or
    nests too deeply raises :class:`RecordSchemaError` naming the file and line."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordSchemaError(f"{path}: not a text file of JSON records (byte "
                                f"{data[exc.start]:#04x} at offset {exc.start} is not "
                                "UTF-8)") from None
    try:
        whole = loads(text)
    except (json.JSONDecodeError, RecursionError):
        whole = None
    if isinstance(whole, dict):
        yield 1, whole
        return
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            rec = loads(line)
        except json.JSONDecodeError as exc:
            raise RecordSchemaError(f"{path} line {n}: not valid JSON ({exc.msg} at column "
                                    f"{exc.colno})") from None
        except RecursionError:
            raise RecordSchemaError(f"{path} line {n}: not a record: the JSON nests too "
                                    "deeply") from None
        yield n, rec
