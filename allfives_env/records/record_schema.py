"""A strict schema check of ``allfives-record/1`` (docs/rules.md, "Game records"), before replay.

:func:`validate` checks every field's presence, type and range, and that no field is unknown,
without replaying anything: what it passes, :func:`allfives_env.records.record.replay` can replay
without a type error. It raises :class:`RecordSchemaError` (a
:class:`~allfives_env.records.record.RecordError`) whose message names the place: ``hand 1 event 4:
field 'tile': ...``. Values are shown shortened (:data:`show`), so a deeply nested value never
overflows the stack. Checks that need the rules engine (a tile dealt twice, a play that breaks
the rules, scores that do not add up) are replay's: "does not replay", not "not a record".
"""

from __future__ import annotations

import json
import reprlib
from typing import Any

from allfives_env.game.rules import OPTION_NAMES, Rules, RulesError, rules_from_dict
from allfives_env.game.seeding import MAX_SEED
from allfives_env.game.tiles import END_NAMES

FORMAT = "allfives-record/1"
TOP_FIELDS = ("format", "rules", "seed", "agents", "hands", "final_scores", "winner",
              "truncated")
HAND_FIELDS = ("leader", "deal", "boneyard", "events", "result", "scores")
RESULT_FIELDS = ("reason", "winner", "hand_points")
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "play": ("type", "seat", "tile", "end", "points"),
    "draw": ("type", "seat", "tile"),
    "pass": ("type", "seat"),
}
REASONS = ("domino", "blocked", "target")
#: The longest agent id (a bot with options or a checkpoint path); the largest seed a record
#: may hold is :data:`allfives_env.game.seeding.MAX_SEED`.
MAX_AGENT_ID = 1000

_repr = reprlib.Repr()
_repr.maxlevel, _repr.maxlist, _repr.maxdict, _repr.maxstring, _repr.maxother = 3, 6, 4, 40, 40


def show(value: Any) -> str:
    """A short, one-line, depth-limited repr of a JSON value (``null``, ``true`` and
    ``false`` as JSON writes them)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return _repr.repr(value)


class RecordError(ValueError):
    """A record that is malformed or does not replay to its own scores (also importable from
    :mod:`allfives_env.records.record`)."""


class RecordSchemaError(RecordError):
    """A JSON value that is not an ``allfives-record/1`` record (wrong field, type or range)."""


def _fail(where: str, message: str) -> RecordSchemaError:
    return RecordSchemaError(f"{where}: {message}" if where else message)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(value: Any, where: str, low: int, high: int | None = None) -> int:
    """An integer ``low..high`` (``high`` None: no upper bound)."""
    if not _is_int(value) or value < low or (high is not None and value > high):
        allowed = f"an integer {low}..{high}" if high is not None else f"an integer >= {low}"
        raise _fail(where, f"{show(value)} ({_kind(value)}) is not allowed: must be {allowed}")
    return value


def _list(value: Any, where: str, length: int | None = None) -> list:
    if not isinstance(value, list):
        raise _fail(where, f"{show(value)} ({_kind(value)}) is not allowed: must be a list")
    if length is not None and len(value) != length:
        raise _fail(where, f"has {len(value)} entries, must have {length}")
    return value


def _object(value: Any, where: str, fields: tuple[str, ...]) -> dict:
    """A JSON object with exactly ``fields``."""
    if not isinstance(value, dict):
        raise _fail(where, f"{show(value)} ({_kind(value)}) is not allowed: must be an object "
                           f"with fields {', '.join(fields)}")
    for name in fields:
        if name not in value:
            raise _fail(where, f"field {name!r} is missing (fields: {', '.join(fields)})")
    for name in value:
        if name not in fields:
            raise _fail(where, f"field {show(name)} is unknown (fields: {', '.join(fields)})")
    return value


def _tile(value: Any, where: str) -> None:
    if not (isinstance(value, list) and len(value) == 2
            and all(_is_int(v) and 0 <= v <= 6 for v in value)):
        raise _fail(where, f"{show(value)} is not a tile: a tile is [a, b], two integers 0..6")


def _tiles(value: Any, where: str) -> None:
    for i, t in enumerate(_list(value, where)):
        _tile(t, f"{where} tile {i}")


def _at(where: str, field: str) -> str:
    return f"{where}: field {field!r}" if where else f"field {field!r}"


def _check_rules(value: Any) -> Rules:
    rules = _object(value, "field 'rules'", OPTION_NAMES)
    try:
        return rules_from_dict(rules)
    except (RulesError, TypeError, ValueError) as exc:
        raise _fail("field 'rules'", " ".join(str(exc).split())) from None


def _check_event(ev: Any, where: str, rules: Rules) -> None:
    if not isinstance(ev, dict):
        raise _fail(where, f"{show(ev)} ({_kind(ev)}) is not an event: an event is an object "
                           "with a 'type' of play, draw or pass")
    kind = ev.get("type")
    if not isinstance(kind, str) or kind not in EVENT_FIELDS:
        raise _fail(_at(where, "type"), f"{show(kind)} is not an event type: types are "
                                        f"{', '.join(EVENT_FIELDS)}")
    _object(ev, f"{where} ({kind})", EVENT_FIELDS[kind])
    _int(ev["seat"], _at(where, "seat"), 0, rules.players - 1)
    if kind != "pass":
        _tile(ev["tile"], _at(where, "tile"))
    if kind == "play":
        end = ev["end"]
        if not isinstance(end, str) or end not in END_NAMES:
            raise _fail(_at(where, "end"), f"{show(end)} is not an end: ends are "
                                           f"{', '.join(END_NAMES)}")
        _int(ev["points"], _at(where, "points"), 0)


def _side(value: Any, where: str, rules: Rules) -> None:
    """A side index or null."""
    if value is not None:
        _int(value, where, 0, rules.n_sides - 1)


def _ints(value: Any, where: str, length: int) -> None:
    for i, v in enumerate(_list(value, where, length)):
        if not _is_int(v):
            raise _fail(f"{where} entry {i}", f"{show(v)} ({_kind(v)}) is not an integer")


def _check_hand(hand: Any, where: str, rules: Rules) -> None:
    _object(hand, where, HAND_FIELDS)
    _int(hand["leader"], _at(where, "leader"), 0, rules.players - 1)
    for seat, tiles in enumerate(_list(hand["deal"], _at(where, "deal"), rules.players)):
        _tiles(tiles, f"{_at(where, 'deal')} seat {seat}")
    _tiles(hand["boneyard"], _at(where, "boneyard"))
    for j, ev in enumerate(_list(hand["events"], _at(where, "events"))):
        _check_event(ev, f"{where} event {j}", rules)
    result = _object(hand["result"], _at(where, "result"), RESULT_FIELDS)
    reason = result["reason"]
    if not isinstance(reason, str) or reason not in REASONS:
        raise _fail(_at(where, "result.reason"), f"{show(reason)} is not a reason: reasons "
                                                 f"are {', '.join(REASONS)}")
    _side(result["winner"], _at(where, "result.winner"), rules)
    _ints(result["hand_points"], _at(where, "result.hand_points"), rules.n_sides)
    _ints(hand["scores"], _at(where, "scores"), rules.n_sides)


def _check_agents(value: Any, players: int) -> None:
    for seat, agent in enumerate(_list(value, "field 'agents'", players)):
        if not isinstance(agent, str):
            raise _fail(f"field 'agents' seat {seat}",
                        f"{show(agent)} ({_kind(agent)}) is not an agent id (a string)")
        if len(agent) > MAX_AGENT_ID:
            raise _fail(f"field 'agents' seat {seat}",
                        f"{show(agent)} has {len(agent)} characters: an agent id has at "
                        f"most {MAX_AGENT_ID}")


def validate(record: Any) -> Rules:
    """Check ``record`` against the ``allfives-record/1`` schema; return its rules.

    Raises :class:`RecordSchemaError` naming the first field that is wrong."""
    if not isinstance(record, dict):
        raise _fail("", f"{show(record)} ({_kind(record)}) is not a record: a record is a "
                        "JSON object")
    if record.get("format") != FORMAT:
        raise _fail("field 'format'", f"{show(record.get('format'))}: not an {FORMAT} record")
    _object(record, "", TOP_FIELDS)
    rules = _check_rules(record["rules"])
    if record["seed"] is not None:
        _int(record["seed"], "field 'seed'", 0, MAX_SEED)
    _check_agents(record["agents"], rules.players)
    hands = _list(record["hands"], "field 'hands'")
    if not hands:
        raise _fail("field 'hands'", "is empty: a record has at least one hand")
    for h, hand in enumerate(hands):
        _check_hand(hand, f"hand {h}", rules)
    _ints(record["final_scores"], "field 'final_scores'", rules.n_sides)
    _side(record["winner"], "field 'winner'", rules)
    if not isinstance(record["truncated"], bool):
        raise _fail("field 'truncated'", f"{show(record['truncated'])} "
                                         f"({_kind(record['truncated'])}) must be true or false")
    return rules

