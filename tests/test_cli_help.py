"""Issue 64, item 4: a command line that helps.

``allfives --version``; a misspelt flag answered with the nearest flag of that subcommand
(git's and cargo's "did you mean"), exit status 2, before any work; the bare ``--help`` in a
user's words; ``play`` and ``serve`` write under the git-ignored ``runs/`` by default.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from allfives.cli import build_parser, main, version

ROOT = Path(__file__).resolve().parents[1]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.strip() == f"allfives {version()}"
    assert version() != "unknown"  # the installed package's metadata


@pytest.mark.parametrize(("argv", "says"), [
    (["train", "--total-step", "1000"], "allfives train: error: unrecognized flag --total-step; "
                                        "did you mean --total-steps?"),
    (["train", "--evalgames=4"], "did you mean --eval-games?"),
    (["eval", "--agent", "random", "greedy"], "allfives eval: error: unrecognized flag --agent; "
                                              "did you mean --agents?"),
    (["simulate", "--game", "3"], "did you mean --games?"),
    (["--verison"], "allfives: error: unrecognized flag --verison; did you mean --version?"),
    (["train", "--zzzzzz"], "`allfives train --help` lists the flags"),
    (["models", "extra"], "allfives models: error: unexpected argument 'extra'"),
])
def test_a_misspelt_flag_gets_the_nearest_one(argv: list[str], says: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert says in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and out == ""
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_bare_help_speaks_to_a_user() -> None:
    text = build_parser([]).format_help()
    assert "one subcommand per module" not in text and "imported only when used" not in text
    assert "--version" in text and "allfives train" in text and "COMMAND --help" in text
    assert "All Fives" in text


def test_the_flags_of_each_command_still_parse() -> None:
    args = build_parser(["train"]).parse_args(["train", "--total-steps", "1000"])
    assert args.command == "train" and args.cfg_total_steps == 1000


def test_play_writes_under_runs_by_default() -> None:
    from allfives_agents import play

    out = play._default_out()
    assert out.parts[:2] == ("runs", "games") and out.suffix == ".jsonl"
    parser = argparse.ArgumentParser()
    play.add_arguments(parser)
    assert "runs/games/" in parser.format_help()


def test_serve_writes_under_runs_by_default() -> None:
    pytest.importorskip("fastapi")
    from allfives_agents.web import server

    parser = argparse.ArgumentParser()
    server.add_arguments(parser)
    assert Path(parser.parse_args([]).records_dir) == Path("runs") / "games"


def test_runs_is_git_ignored() -> None:
    assert "runs/" in (ROOT / ".gitignore").read_text().splitlines()


def test_a_played_game_lands_under_runs(tmp_path: Path) -> None:
    """``allfives play`` as a user runs it (quitting at once is not saved, so a whole game is
    played by typing its first legal move number each turn), in a fresh folder."""
    moves = "1\n" * 400
    proc = subprocess.run([sys.executable, "-m", "allfives.cli", "play", "--opponents",
                           "random", "--seed", "3", "--set", "target=30"], input=moves,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    saved = list((tmp_path / "runs" / "games").glob("play-*.jsonl"))
    assert len(saved) == 1, proc.stdout[-2000:]
    assert [p.name for p in tmp_path.iterdir()] == ["runs"]
