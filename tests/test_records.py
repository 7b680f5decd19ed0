"""Game records: the allfives-record/1 format, files, and replay catching every tampering."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from reference_checker import check_record

from allfives_agents.base import make_agent
from allfives_env.game.match import game_seed, play_game
from allfives_env.game.rules import OPTION_NAMES, make_rules
from allfives_env.records.record import (
    FORMAT,
    RecordError,
    game_record,
    read_records,
    replay,
    verify,
    write_records,
)


def record_for(preset: str = "five_up", players: int = 2, seed: int = 3,
               **overrides: Any) -> dict[str, Any]:
    rules = make_rules(preset, players=players, **overrides)
    ids = ["greedy", "random", "greedy", "random"][:players]
    state = play_game(rules, [make_agent(a) for a in ids], seed)
    return json.loads(json.dumps(game_record(state, seed=seed, agents=ids)))


def first_event(rec: dict, kind: str, **match: Any) -> tuple[int, int]:
    """(hand, event) of the first event of ``kind`` whose fields match."""
    for h, hand in enumerate(rec["hands"]):
        for j, ev in enumerate(hand["events"]):
            if ev["type"] == kind and all(ev.get(k) == v for k, v in match.items()):
                return h, j
    raise LookupError(kind)


@pytest.mark.parametrize(("preset", "players"), [("all_fives", 2), ("five_up", 3),
                                                 ("muggins", 4), ("pagat", 4)])
def test_record_format(preset: str, players: int) -> None:
    rec = record_for(preset, players)
    rules = make_rules(preset, players=players)
    assert rec["format"] == FORMAT
    assert list(rec["rules"]) == list(OPTION_NAMES)
    assert rec["rules"] == rules.to_dict()
    assert rec["seed"] == 3 and len(rec["agents"]) == players
    assert rec["winner"] is not None or rec["truncated"]
    assert len(rec["final_scores"]) == rules.n_sides
    assert rec["final_scores"] == rec["hands"][-1]["scores"]
    for hand in rec["hands"]:
        assert set(hand) == {"leader", "deal", "boneyard", "events", "result", "scores"}
        assert [len(d) for d in hand["deal"]] == [rules.hand_size] * players
        tiles = [tuple(t) for d in hand["deal"] for t in d] + [tuple(t) for t in hand["boneyard"]]
        assert sorted(tiles) == [(a, b) for a in range(7) for b in range(a, 7)]
        assert hand["events"][0]["type"] == "play" and hand["events"][0]["end"] == "lead"
        assert hand["events"][0]["seat"] == hand["leader"]
        for ev in hand["events"]:
            assert ev["type"] in ("play", "draw", "pass")
            if ev["type"] == "play":
                assert ev["end"] in ("lead", "left", "right", "up", "down")
                assert ev["points"] >= 0 and ev["points"] % 5 == 0
        assert hand["result"]["reason"] in ("domino", "blocked", "target")
        assert len(hand["result"]["hand_points"]) == rules.n_sides
    assert check_record(rec) == []


def test_replay_reproduces_every_score() -> None:
    rec = record_for("pagat", 4, seed=11)
    state = replay(rec)
    assert state.scores == rec["final_scores"] and state.winner == rec["winner"]
    assert [h["scores"] for h in state.history] == [h["scores"] for h in rec["hands"]]
    verify(rec)


def test_a_lead_written_the_other_way_round_replays() -> None:
    rec = record_for("all_fives", 2, seed=5)
    h = next(i for i, hand in enumerate(rec["hands"])
             if len(set(hand["events"][0]["tile"])) == 2)  # a lead that is not a double
    flipped = copy.deepcopy(rec)
    events = flipped["hands"][h]["events"]
    events[0]["tile"] = events[0]["tile"][::-1]
    for ev in events[1:]:  # the lead's left end is now tile[0]: left and right swap
        if ev["type"] == "play" and ev["end"] in ("left", "right"):
            ev["end"] = "right" if ev["end"] == "left" else "left"
    assert flipped != rec
    replay(flipped)
    assert check_record(flipped) == []


def tamper_points(rec: dict) -> str:
    h, j = first_event(rec, "play", points=10)
    rec["hands"][h]["events"][j]["points"] = 15
    return f"hand {h} event {j}"


def tamper_hand_points(rec: dict) -> str:
    rec["hands"][0]["result"]["hand_points"][0] += 5
    return "hand 0: result"


def tamper_scores(rec: dict) -> str:
    rec["hands"][0]["scores"][1] += 5
    return "hand 0: scores"


def tamper_final(rec: dict) -> str:
    rec["final_scores"][0] += 5
    return "final_scores"


def tamper_winner(rec: dict) -> str:
    rec["winner"] = 1 - rec["winner"]
    return "winner"


def tamper_draw(rec: dict) -> str:
    h, j = first_event(rec, "draw")
    hand = rec["hands"][h]
    bone = hand["boneyard"]
    k = bone.index(hand["events"][j]["tile"])
    bone[k], bone[-1] = bone[-1], bone[k]  # the drawn tile moves to the bottom of the pile
    return f"hand {h}"


def tamper_seat(rec: dict) -> str:
    ev = rec["hands"][0]["events"][1]
    ev["seat"] = 1 - ev["seat"]
    return "hand 0 event 1"


def tamper_illegal(rec: dict) -> str:
    h, j = first_event(rec, "play", end="left")
    ev = rec["hands"][h]["events"][j]
    ev["end"] = "up"
    return f"hand {h} event {j}"


def tamper_truncate(rec: dict) -> str:
    rec["hands"][0]["events"].pop()
    return "hand 0"


def tamper_leader(rec: dict) -> str:
    # all_fives: a later hand is led by the seat that dominoed the last one
    h = next(i for i, hand in enumerate(rec["hands"][:-1]) if hand["result"]["reason"] ==
             "domino") + 1
    hand = rec["hands"][h]
    other = 1 - hand["leader"]
    hand["leader"] = other
    for ev in hand["events"]:
        ev["seat"] = 1 - ev["seat"]
    return f"hand {h}"


def tamper_rules(rec: dict) -> str:
    rec["rules"]["hand_size"] = 10
    return "rules"


TAMPERS = [tamper_points, tamper_hand_points, tamper_scores, tamper_final, tamper_winner,
           tamper_draw, tamper_seat, tamper_illegal, tamper_truncate, tamper_leader,
           tamper_rules]


@pytest.mark.parametrize("tamper", TAMPERS, ids=[t.__name__ for t in TAMPERS])
def test_replay_catches_tampering(tamper: Any) -> None:
    rec = record_for("all_fives", 2, seed=21)
    replay(rec)
    bad = copy.deepcopy(rec)
    where = tamper(bad)
    with pytest.raises(RecordError) as info:
        replay(bad)
    assert where in str(info.value)
    assert check_record(bad) != []  # the independent checker agrees


@pytest.mark.parametrize("bad", [[], "x", {"format": "allfives-record/0"}, {"format": FORMAT}])
def test_replay_refuses_non_records(bad: Any) -> None:
    with pytest.raises(RecordError):
        replay(bad)


def test_write_and_read_jsonl(tmp_path: Path) -> None:
    recs = [record_for("muggins", 3, seed=game_seed(1, k)) for k in range(3)]
    path = tmp_path / "sub" / "games.jsonl"
    write_records(path, recs)
    assert list(read_records(path)) == recs
    assert len(path.read_text().splitlines()) == 3
    assert [p.name for p in path.parent.iterdir()] == ["games.jsonl"]  # no temp file left
    one = tmp_path / "one.json"
    one.write_text(json.dumps(recs[0], indent=2))
    assert list(read_records(one)) == [recs[0]]


def test_write_replaces_atomically(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text("old\n")
    write_records(path, [record_for()])
    assert path.read_text().startswith('{"format":')


def test_bad_jsonl_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(record_for()) + "\n{oops\n")
    with pytest.raises(RecordError, match="line 2"):
        list(read_records(path))


def test_no_record_without_a_log() -> None:
    from allfives_env.game.engine import GameState

    with pytest.raises(ValueError, match="log=False"):
        game_record(GameState(make_rules(), seed=0, log=False))


ROOT = Path(__file__).resolve().parent.parent


def test_the_spec_record_replays() -> None:
    text = (ROOT / "docs" / "rules.md").read_text()
    block = text.split('```json\n{"format": "allfives-record/1"', 1)[1].split("```", 1)[0]
    rec = json.loads('{"format": "allfives-record/1"' + block)
    state = replay(rec)
    assert state.scores == rec["final_scores"] == [10, 15]
    assert check_record(rec) == []


def test_ci_runs_the_readme_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    for command in ("python3 -m venv .venv && . .venv/bin/activate",
                    'pip install -c constraints.txt -e ".[train,dev,web]"',
                    'pytest -n 2 -m "not slow"'):
        assert f"\n{command}\n" in readme
        assert f"\n{command}\n" in ci
    assert "\npytest -n 2 -m slow\n" in ci  # and the marked set
