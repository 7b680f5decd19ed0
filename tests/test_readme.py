"""The README: its commands work after the two set-up commands, the quick ones run as
printed, what they write is git-ignored. Its Python blocks run in tests/test_doc_blocks.py
(with every other page's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_the_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 2  # the AEC loop, a bot as an opponent


COMMANDS = [line.split("  #")[0].strip()
            for block in re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
            for line in block.replace("\\\n", " ").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
#: README commands quick enough to run here as printed (the others are parsed only).
RUN = ("simulate", "replay", "models")


#: What the activated venv of the set-up provides (one prefix throughout: none).
PROVIDED = ("allfives ", "pytest ", "pip ", "python ", "mkdocs ",
            "python3 -m venv .venv && . .venv/bin/activate")


def test_every_readme_command_works_after_the_two_setup_commands() -> None:
    """One command prefix: the set-up activates the venv, then every command is bare;
    none reaches into ``.venv/bin/`` or sets ``PYTHONPATH``."""
    assert COMMANDS
    other = [c for c in COMMANDS if not c.startswith(PROVIDED)]
    assert not other, other
    readme = (ROOT / "README.md").read_text()
    assert "PYTHONPATH" not in readme
    assert ".venv/bin/allfives" not in readme and ".venv/bin/python " not in readme


def test_the_docs_use_the_same_prefix() -> None:
    for doc in sorted((ROOT / "docs").glob("*.md")):
        text = doc.read_text()
        assert "PYTHONPATH=" not in text, doc.name
        assert ".venv/bin/allfives" not in text and ".venv/bin/python" not in text, doc.name


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.startswith("allfives ")])
def test_readme_allfives_command_parses_and_the_short_ones_run(command: str, tmp_path: Path,
                                                               monkeypatch) -> None:
    import shlex

    from allfives.cli import build_parser, main

    argv = shlex.split(command)[1:]
    build_parser(argv).parse_args(argv)  # SystemExit(2) on an unknown flag or bad value
    if argv[0] in RUN:
        monkeypatch.chdir(tmp_path)
        if argv[0] == "replay":  # the README's simulate line wrote it
            main(["simulate", "--preset", "five_up", "--games", "100", "--seed", "0",
                  "--agents", "greedy", "random", "--out", "runs/games.jsonl"])
        assert main(argv) == 0, command


OUTPUT_FLAGS = ("--out", "--records-dir", "--json", "--run-dir", "--save")


def test_every_file_a_readme_command_writes_is_git_ignored() -> None:
    """`git status` stays clean after the README's commands: what they write lands in runs/."""
    import shlex
    import subprocess

    outputs = [(c, words[i + 1]) for c in COMMANDS if (words := shlex.split(c))
               for i, w in enumerate(words[:-1]) if w in OUTPUT_FLAGS]
    assert outputs, "the README writes no file? (then drop this test)"
    for command, path in outputs:
        probe = path.rstrip("/") + ("/x" if path.endswith("/") else "")
        ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", probe], cwd=ROOT)
        assert ignored.returncode == 0, f"{command}: {path} is not git-ignored"
