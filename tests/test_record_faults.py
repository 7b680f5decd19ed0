"""Issue 9 item 9: malformed records. Every one gives ONE line on stderr naming the file, line,
game, hand, event and field, and exit code 2 (not a record) or 1 (does not replay); a
hypothesis fuzz test (mutated real records, random JSON, random bytes) asserts that no input
makes ``allfives replay`` raise."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allfives.cli import main
from allfives_agents.base import make_agent
from allfives_env.game.match import play_game
from allfives_env.game.rules import make_rules
from allfives_env.records.record import RecordError, RecordSchemaError, game_record, replay
from allfives_env.records.record_schema import validate


def _record(preset: str, players: int, seed: int) -> dict[str, Any]:
    rules = make_rules(preset, players=players)
    ids = ["greedy", "random", "greedy", "random"][:players]
    state = play_game(rules, [make_agent(a) for a in ids], seed)
    return json.loads(json.dumps(game_record(state, seed=seed, agents=ids)))


REAL = [_record("all_fives", 2, 3), _record("five_up", 3, 4), _record("muggins", 4, 5)]
GOOD = REAL[0]
WORK = Path(tempfile.mkdtemp(prefix="allfives-record-faults-"))


def _first(rec: dict, kind: str) -> dict:
    return next(e for h in rec["hands"] for e in h["events"] if e["type"] == kind)


def _replay_cli(content: bytes, *args: str) -> tuple[int, str]:
    """``allfives replay`` in this process: (exit code, stderr)."""
    path = WORK / "games.jsonl"
    path.write_bytes(content)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["replay", str(path), *args])
    return code, err.getvalue()


def _lines(*records: Any) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _set(path: tuple, value: Any) -> Callable[[dict], None]:
    def mutate(rec: dict) -> None:
        node = rec
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return mutate


def _pop(path: tuple) -> Callable[[dict], None]:
    def mutate(rec: dict) -> None:
        node = rec
        for key in path[:-1]:
            node = node[key]
        node.pop(path[-1])
    return mutate


def _on_first(kind: str, field: str, value: Any) -> Callable[[dict], None]:
    return lambda rec: _first(rec, kind).__setitem__(field, value)


# (name, mutation, exit code, words the one line must hold)
CASES: list[tuple[str, Callable[[dict], None], int, tuple[str, ...]]] = [
    ("events as an object", _set(("hands", 0, "events"), {"a": 1}), 2,
     ("hand 0", "field 'events'", "must be a list")),
    ("an event as a string", _set(("hands", 0, "events", 1), "play"), 2,
     ("hand 0 event 1", "not an event")),
    ("a lead without tile", _pop(("hands", 0, "events", 0, "tile")), 2,
     ("hand 0 event 0", "field 'tile' is missing")),
    ("a draw with tile 5", _on_first("draw", "tile", 5), 2, ("event", "field 'tile'", "5")),
    ("a draw with tile [[1,2]]", _on_first("draw", "tile", [[1, 2]]), 2,
     ("event", "field 'tile'", "[[1, 2]]")),
    ("a three-number tile", _set(("hands", 0, "deal", 1, 2), [1, 2, 3]), 2,
     ("hand 0", "field 'deal' seat 1 tile 2", "[1, 2, 3]")),
    ("leader 'x'", _set(("hands", 0, "leader"), "x"), 2, ("hand 0", "field 'leader'", "'x'")),
    ("seat '0'", _set(("hands", 0, "events", 1, "seat"), "0"), 2,
     ("hand 0 event 1", "field 'seat'", "a string")),
    ("type teleport", _set(("hands", 0, "events", 1, "type"), "teleport"), 2,
     ("hand 0 event 1", "field 'type'", "teleport")),
    ("a deal tile '66'", _set(("hands", 0, "deal", 0, 0), "66"), 2,
     ("hand 0", "field 'deal' seat 0 tile 0", "'66'")),
    ("seed 'abc'", _set(("seed",), "abc"), 2, ("field 'seed'", "'abc'")),
    ("agents null", _set(("agents",), None), 2, ("field 'agents'", "null")),
    ("an unknown field", _set(("hands", 0, "extra"), 1), 2, ("hand 0", "'extra'", "unknown")),
    ("truncated 'no'", _set(("truncated",), "no"), 2, ("field 'truncated'",)),
    ("a result reason", _set(("hands", 0, "result", "reason"), "luck"), 2,
     ("hand 0", "result.reason", "luck")),
    ("wrong points", lambda rec: _first(rec, "play").__setitem__(
        "points", _first(rec, "play")["points"] + 5), 1,
     ("does not replay", "hand 0 event 0", "field 'points'")),
    ("seat out of turn", lambda rec: rec["hands"][0]["events"][1].__setitem__(
        "seat", 1 - rec["hands"][0]["events"][1]["seat"]), 1,
     ("does not replay", "hand 0 event 1", "field 'seat'")),
]


@pytest.mark.parametrize(("name", "mutate", "code", "words"), CASES,
                         ids=[c[0] for c in CASES])
def test_each_malformed_record_gives_one_line(name: str, mutate: Callable[[dict], None],
                                              code: int, words: tuple[str, ...]) -> None:
    bad = copy.deepcopy(GOOD)
    mutate(bad)
    got, err = _replay_cli(_lines(GOOD, bad), "--verify-only")
    assert got == code, err
    assert len(err.strip().splitlines()) == 1, err
    assert f"{WORK / 'games.jsonl'} line 2: game 1: " in err
    for word in words:
        assert word in err, (word, err)
    with pytest.raises(RecordSchemaError if code == 2 else RecordError):
        replay(bad)


@pytest.mark.parametrize(("content", "words"), [
    (b"[" * 100_000 + b"]" * 100_000 + b"\n", ("line 1", "nests too deeply")),
    (bytes(range(256)) * 8, ("not a text file", "offset 128")),
    (b'{"format": "allfives-record/1"\n', ("line 1", "not valid JSON")),
    (b"\n\n[]\n", ("line 3", "game 0", "a list")),
])
def test_files_that_hold_no_records(content: bytes, words: tuple[str, ...]) -> None:
    code, err = _replay_cli(content)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert str(WORK / "games.jsonl") in err
    for word in words:
        assert word in err, (word, err)


def test_real_records_pass_the_schema() -> None:
    for rec in REAL:
        assert validate(rec).players == len(rec["agents"])
        replay(rec)


# ---------------------------------------------------------------------- fuzzing
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 30) | st.floats(allow_nan=True)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=12,
)


@st.composite
def mutated_records(draw: st.DrawFn) -> dict:
    """A real record with one to three places changed: a value replaced by random JSON, a
    field or entry removed or added, a number nudged."""
    rec = copy.deepcopy(draw(st.sampled_from(REAL)))
    for _ in range(draw(st.integers(1, 3))):
        parent, key = None, None
        node: Any = rec
        while isinstance(node, (dict, list)) and node and draw(st.integers(0, 4)):
            key = draw(st.sampled_from(list(node) if isinstance(node, dict)
                                       else range(len(node))))
            parent, node = node, node[key]
        if parent is None:
            continue
        how = draw(st.sampled_from(["replace", "remove", "add", "nudge"]))
        if how == "replace":
            parent[key] = draw(JSON)
        elif how == "remove":
            parent.pop(key)
        elif how == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(JSON)
        elif how == "add":
            parent.insert(key, draw(JSON))
        elif isinstance(node, int) and not isinstance(node, bool):
            parent[key] = node + draw(st.sampled_from([-5, -1, 1, 5]))
    return rec


def _assert_clean(content: bytes, *args: str) -> None:
    code, err = _replay_cli(content, *args)
    assert code in (0, 1, 2)
    if code:
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith("allfives replay") and str(WORK / "games.jsonl") in err, err


@given(rec=mutated_records(), show=st.booleans())
def test_fuzz_mutated_real_records(rec: dict, show: bool) -> None:
    args = ("--game", "1") if show else ("--verify-only",)
    _assert_clean(_lines(GOOD, rec), *args)


@given(values=st.lists(JSON, min_size=1, max_size=3))
def test_fuzz_random_json(values: list) -> None:
    _assert_clean(_lines(*values), "--verify-only")


@given(data=st.binary(min_size=1, max_size=64))
def test_fuzz_random_bytes(data: bytes) -> None:
    _assert_clean(data)
