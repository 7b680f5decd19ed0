"""Output paths are checked before any work (issue 9 item 11), and terminal play neither
prints a traceback on Ctrl-C nor starts a game it must refuse (item 12)."""

from __future__ import annotations

import builtins
import os
from pathlib import Path

import pytest

import allfives_agents.evaluation.evaluate
import allfives_agents.evaluation.simulate
import allfives_env.benchmarks.bench
from allfives.cli import main
from allfives_env.inputs.paths import atomic_write, check_output_path
from allfives_env.records.record import read_records


def _no_work(*_: object, **__: object) -> None:
    raise AssertionError("the work started before the output path was checked")


def _listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("argv,flag", [
    (["simulate", "--games", "2", "--no-progress", "--out", "{dir}"], "--out"),
    (["eval", "--agents", "random", "greedy", "--games", "2", "--workers", "1",
      "--no-progress", "--json", "{dir}"], "--json"),
    (["eval", "--agents", "random", "greedy", "--games", "2", "--workers", "1",
      "--no-progress", "--csv", "{dir}"], "--csv"),
    (["eval", "--agents", "random", "greedy", "--games", "2", "--workers", "1",
      "--no-progress", "--records", "{dir}"], "--records"),
    (["bench", "--seconds", "0.1", "--rounds", "1", "--json", "{dir}"], "--json"),
    (["play", "--opponents", "random", "--out", "{dir}"], "--out"),
])
def test_a_directory_as_output_is_refused_before_the_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        argv: list[str], flag: str) -> None:
    target = tmp_path / "results"
    target.mkdir()
    monkeypatch.setattr(allfives_agents.evaluation.simulate, "play_game", _no_work)
    monkeypatch.setattr(allfives_agents.evaluation.evaluate, "tournament", _no_work)
    monkeypatch.setattr(allfives_env.benchmarks.bench, "run_all", _no_work)
    monkeypatch.setattr(builtins, "input", _no_work)
    before = _listing(tmp_path)
    code = main([a.replace("{dir}", str(target)) for a in argv])
    captured = capsys.readouterr()
    assert code == 2
    assert f"{flag} '{target}' is a directory" in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err
    assert "=== Hand 1 ===" not in captured.out
    assert _listing(tmp_path) == before  # nothing written, no temporary file anywhere


def test_check_output_path_refusals_and_acceptance(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a directory"):
        check_output_path(tmp_path / "file" / "out.json", "--json")
    with pytest.raises(ValueError, match="give a file name"):
        check_output_path("", "--out")
    assert check_output_path(tmp_path / "new" / "deeper" / "x.json", "--json").name == "x.json"
    assert not (tmp_path / "new").exists()  # the check creates nothing


def test_atomic_write_leaves_nothing_behind_and_normal_permissions(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write("half")
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []
    with atomic_write(target) as f:
        f.write("whole\n")
    umask = os.umask(0)
    os.umask(umask)
    assert target.read_text() == "whole\n"
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    assert list(tmp_path.iterdir()) == [target]


def test_a_played_game_is_saved_elsewhere_when_out_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "gone" / "game.jsonl"
    real_input = iter(["1"] * 10_000)

    def answer(prompt: str = "") -> str:  # the directory vanishes during the game
        if out.parent.is_dir():
            out.parent.rmdir()
            out.parent.write_text("now a file")
        return next(real_input)

    out.parent.mkdir()
    monkeypatch.setattr(builtins, "input", answer)
    code = main(["play", "--opponents", "random", "--seed", "3", "--set", "target=30",
                 "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert f"Could not save to {out}" in text
    (saved,) = list((tmp_path / "runs" / "games").glob("play-*.jsonl"))  # the default place
    assert f"Game saved to {saved.relative_to(tmp_path)}" in text
    (rec,) = list(read_records(saved))
    assert rec["agents"][0] == "human"


def test_ctrl_c_in_play_prints_no_traceback(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)

    def ctrl_c(prompt: str = "") -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(builtins, "input", ctrl_c)
    try:
        code = main(["play", "--opponents", "random", "--seed", "1"])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped allfives play (a traceback for the user)")
    captured = capsys.readouterr()
    assert code == 130
    assert "Interrupted (Ctrl-C); the unfinished game was not saved." in captured.out
    assert "Traceback" not in captured.out + captured.err
    assert not (tmp_path / "games").exists()


def test_wrong_seat_count_checkpoint_is_refused_before_the_first_hand(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(builtins, "input", _no_work)
    code = main(["play", "--opponents", "ckpt:all_fives_2p", "--players", "4"])
    captured = capsys.readouterr()
    assert code == 2
    assert "trained for 2 seats; this game has 4 seats" in captured.err
    assert "=== Hand 1 ===" not in captured.out and "Traceback" not in captured.err
