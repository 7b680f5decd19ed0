"""``allfives play`` driven through scripted sessions."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from pathlib import Path

import pytest

from allfives.cli import main
from allfives_agents.levels import playable
from allfives_agents.play import Quit, parse_move
from allfives_env.game.tiles import str_to_action
from allfives_env.records.record import read_records, verify


def _script(monkeypatch: pytest.MonkeyPatch, first: list[str], then: str | None) -> list[str]:
    """Answer the prompts with ``first``, then ``then`` forever (None: end of input)."""
    prompts: list[str] = []
    answers: Iterator[str] = iter(first)

    def fake_input(prompt: str = "") -> str:
        prompts.append(prompt)
        for answer in answers:
            return answer
        if then is None:
            raise EOFError
        return then

    monkeypatch.setattr(builtins, "input", fake_input)
    return prompts


@pytest.mark.parametrize("preset,players,extra", [
    ("five_up", 2, []), ("all_fives", 4, ["--seat", "1"]),
])
def test_a_whole_game_against_random(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], preset: str,
                                     players: int, extra: list[str]) -> None:
    bad = ["", "foo", "99", "0", "help", "9-9 left", "6-6 sideways"]
    prompts = _script(monkeypatch, bad, "1")
    out = tmp_path / "game.jsonl"
    code = main(["play", "--opponents", "random", "--preset", preset, "--players",
                 str(players), "--seed", "12", "--out", str(out), "--set", "target=60", *extra])
    text = capsys.readouterr().out
    assert code == 0
    assert len(prompts) > len(bad)  # bad answers were re-prompted, then the game went on
    for message in ("type a move", "cannot read 'foo'", "99 is not on the list",
                    "0 is not on the list", "Answer with one of", "tile halves must be 0..6",
                    "end must be one of"):
        assert message in text
    assert "Layout:" in text and "Your hand:" in text and "Your moves:" in text
    assert "Hand 1 over" in text and "Game over" in text and "Scores (target 60)" in text
    (rec,) = list(read_records(out))
    verify(rec)
    seat = int(extra[1]) if extra else 0
    assert rec["agents"][seat] == "human" and rec["seed"] == 12
    assert f"Game saved to {out}" in text


def test_the_default_opponent_is_the_strongest_model(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """No --opponents and no --level: the strongest level, the search with the shipped model
    inside, named in the record by the model it resolved to (it once failed with a traceback
    before the first move)."""
    _script(monkeypatch, [], "1")
    out = tmp_path / "g.jsonl"
    assert main(["play", "--preset", "five_up", "--seed", "4", "--set", "target=40",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    here = playable("search:net=best,batched=1")  # unbatched without numba
    assert f"Opponents: level strongest, {here} (five_up_2p)" in text
    assert "Game over" in text
    (rec,) = list(read_records(out))
    verify(rec)
    assert rec["agents"] == ["human", here.replace("net=best", "net=five_up_2p")]


def test_other_seats_draws_are_shown_as_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _script(monkeypatch, [], "1")
    out = tmp_path / "g.jsonl"
    assert main(["play", "--opponents", "greedy", "--seed", "5", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    (rec,) = list(read_records(out))
    draws = sum(ev["type"] == "draw" and ev["seat"] == 1
                for hand in rec["hands"] for ev in hand["events"])
    shown = [line for line in text.splitlines() if "seat 1 (greedy) draws" in line]
    assert draws > 0 and shown
    assert all("[" not in line for line in shown)  # counts, never tiles
    assert sum(int(line.split("draws ")[1].split()[0]) for line in shown) == draws


def test_quit_and_end_of_input_leave_without_saving(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    for first, then in ((["quit"], "1"), ([], None)):
        _script(monkeypatch, first, then)
        out = tmp_path / "never.jsonl"
        assert main(["play", "--opponents", "random", "--seed", "1", "--out", str(out)]) == 0
        assert "not saved" in capsys.readouterr().out
        assert not out.exists()


def test_parse_move_forms() -> None:
    legal = [str_to_action("2-5 left"), str_to_action("2-5 right"), str_to_action("3-4 up")]
    assert parse_move("2", legal) == legal[1]
    assert parse_move("25l", legal) == legal[0]
    assert parse_move("[2|5]@right", legal) == legal[1]
    assert parse_move("5-2 left", legal) == legal[0]
    assert parse_move("3-4", legal) == legal[2]  # a tile alone that fits one end
    assert parse_move("34", legal) == legal[2]  # two digits beyond the list: a tile
    assert parse_move("25r", legal) == legal[1]
    with pytest.raises(ValueError, match="more than one end"):
        parse_move("[2|5]", legal)
    with pytest.raises(ValueError, match="end must be one of"):
        parse_move("2-5 sideways", legal)
    with pytest.raises(ValueError, match="more than one end"):
        parse_move("2-5", legal)
    with pytest.raises(ValueError, match="cannot be played now"):
        parse_move("6-6", legal)
    with pytest.raises(ValueError, match="not a legal move"):
        parse_move("3-4 down", legal)
    with pytest.raises(Quit):
        parse_move("QUIT", legal)


@pytest.mark.parametrize("argv,message", [
    (["--opponents", "random", "greedy"], "one id, or 1 ids"),
    (["--opponents", "nosuchbot"], "unknown agent"),
    (["--seat", "2"], "--seat=2"),
    (["--opponents", "ckpt:best", "--players", "4", "--no-teams"],
     "--opponents: no shipped model plays 4 seats"),
])
def test_bad_options(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", *argv]) == 2
    assert message in capsys.readouterr().err


def test_the_turn_display_stays_within_100_columns(capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_agents.base import make_agent
    from allfives_agents.play import Session
    from allfives_env.game.match import new_game
    from allfives_env.game.rules import make_rules
    from allfives_env.game.view import SeatView

    rules = make_rules("five_up", players=2, hand_size=14)
    session = Session(rules, {1: make_agent("random")}, 0, 1, ["human", "random"])
    session.state = new_game(rules, 1)
    session.show_turn(SeatView.of(session.state, 0))
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert out.split("Scores")[0].count("[") == 14  # every tile, none split across lines
