"""Replays for the page: a record checked by :func:`allfives_env.records.record.replay`, then played
again move by move into frames the page steps through.

A frame is :func:`allfives_agents.web.views.table_view` with every hand shown, after the deal of
a hand or after one play, with the play (``move``) and the draws and passes it caused (``then``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from allfives_agents.web.views import event_json, table_view
from allfives_env.game.engine import GameState
from allfives_env.game.tiles import N_ENDS
from allfives_env.inputs.safeyaml import json_depth, loads
from allfives_env.records.record import RecordError, replay

MAX_FILES = 500
#: The most JSON values (counted before parsing as ``[``, ``{`` and ``,`` characters, strings
#: included) a record text may hold: a Python object per value costs up to ~80 bytes, so this
#: bounds what parsing builds (about 140 two-seat games hold 300,000).
MAX_VALUES = 400_000
MAX_DEPTH = 32  # lists and objects within each other (a record nests 5 deep)


def parse_records_text(text: str, where: str = "upload") -> list[dict[str, Any]]:
    """The records in a JSON document or JSON Lines text (RecordError says what is wrong,
    in one line: JSON that is not valid, that holds more than :data:`MAX_VALUES` values, or
    that nests too deeply to parse)."""
    values = text.count("[") + text.count("{") + text.count(",")
    if values > MAX_VALUES:
        raise RecordError(f"{where}: about {values} JSON values, over the {MAX_VALUES} this "
                          "server parses in one file: split it into smaller files")
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise RecordError(f"{where}: not a record: the JSON nests too deeply ({depth} "
                          f"levels, at most {MAX_DEPTH})")
    try:
        whole = loads(text)
    except (json.JSONDecodeError, RecursionError):
        whole = None
    if isinstance(whole, dict):
        return [whole]
    if isinstance(whole, list):
        return whole
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(loads(line))
        except json.JSONDecodeError as exc:
            raise RecordError(f"{where} line {n}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise RecordError(f"{where} line {n}: not a record: the JSON nests too "
                              "deeply") from None
    if not out:
        raise RecordError(f"{where}: no records (an allfives-record/1 JSON or JSON Lines file)")
    return out


def summary(record: Any) -> dict[str, Any]:
    """One line per game for the picker: only flat values (strings, integers) from an
    unchecked record, so nothing nested of a client's goes back out."""
    if not isinstance(record, dict):
        return {"agents": [], "hands": 0, "final_scores": [], "winner": None}
    hands = record.get("hands")
    winner = record.get("winner")
    return {"agents": _flat(record.get("agents"), str),
            "hands": len(hands) if isinstance(hands, list) else 0,
            "final_scores": _flat(record.get("final_scores"), int),
            "winner": winner if isinstance(winner, int) and not isinstance(winner, bool) else None}


def _flat(value: Any, kind: type) -> list[Any]:
    """The first few items of a list that are of ``kind`` (strings cut short)."""
    if not isinstance(value, list):
        return []
    items = [v for v in value[:8] if isinstance(v, kind) and not isinstance(v, bool)]
    return [v[:60] if isinstance(v, str) else v for v in items]


def frames_of(record: dict[str, Any]) -> dict[str, Any]:
    """Verify ``record`` and return its frames (RecordError if it does not replay)."""
    final = replay(record)
    deals = [h["deal"] for h in final.history]
    state = GameState(final.rules, dealer=lambda k, _rng: deals[k], log=True)
    frames = []
    for k, hand in enumerate(final.history):
        if k > 0:
            state.next_hand()
        frames.append(_frame(state, None, []))
        done = 0
        for ev in hand["events"]:
            if ev[0] != "play":
                continue
            state.apply(ev[2] * N_ENDS + ev[3])
            log = state.log or []
            new = log[done:]
            done = len(log)
            frames.append(_frame(state, new[0], new[1:]))
    return {"rules": final.rules.to_dict(), "agents": record.get("agents"),
            "seed": record.get("seed"), "final_scores": final.scores, "winner": final.winner,
            "frames": frames}


def _frame(state: GameState, move: tuple | None, then: list[tuple]) -> dict[str, Any]:
    view = table_view(state, None, reveal=True)
    del view["events"], view["rules"], view["preset"]
    view["move"] = event_json(move, True) if move else None
    view["then"] = [event_json(ev, True) for ev in then]
    return view


def list_files(folder: Path | None) -> list[str]:
    """Record files under ``folder`` (relative paths), at most :data:`MAX_FILES`: regular
    files inside it only, never a symbolic link or anything under one."""
    if folder is None or not folder.is_dir():
        return []
    root = folder.resolve()
    found = sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl")
                   and _inside(root, folder, p))
    return [p.relative_to(folder).as_posix() for p in found[:MAX_FILES]]


def _inside(root: Path, folder: Path, path: Path) -> bool:
    """``path`` is a regular file under ``folder`` with no symbolic link on the way."""
    rel = path.relative_to(folder)
    step = folder
    for part in rel.parts:
        step = step / part
        if step.is_symlink():
            return False
    return path.is_file() and path.resolve().is_relative_to(root)


def read_listed(folder: Path | None, name: str, max_bytes: int | None = None) -> str:
    """The text of a file that :func:`list_files` lists (nothing else can be read); a file
    over ``max_bytes`` or not UTF-8 text is a RecordError."""
    if name not in list_files(folder):
        raise FileNotFoundError(f"no record file {name!r} in the replay folder")
    assert folder is not None
    path = folder / name
    if path.is_symlink() or not path.resolve().is_relative_to(folder.resolve()):
        raise FileNotFoundError(f"no record file {name!r} in the replay folder")
    if max_bytes is not None and path.stat().st_size > max_bytes:
        raise RecordError(f"{name}: the file is over {max_bytes // 2**20} MiB, the most the "
                          "page replays: split it into smaller files")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{name}: not UTF-8 text (an allfives-record/1 JSON file)") from None
