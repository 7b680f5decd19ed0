"""The README's OpenSpiel snippet runs as written, and so does examples/openspiel_ismcts.py
(with tiny budgets)."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

ROOT = Path(__file__).resolve().parents[1]


def test_readme_snippet_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    text = readme[re.search(r"\n## [^\n]*OpenSpiel", readme).start() + 1:]
    text = text[:text.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "openspiel-snippet", "exec"), {})  # noqa: S102


def test_example_plays_ismcts_against_search(capsys: pytest.CaptureFixture[str]) -> None:
    example = runpy.run_path(str(ROOT / "examples" / "openspiel_ismcts.py"))
    results = example["main"](["--sims", "4", "--games", "1", "--search", "search:sims=8",
                               "--game", "allfives(preset=five_up,target=40)"])
    assert len(results) == 1 and abs(sum(results[0])) < 1e-9
    assert "record verified" in capsys.readouterr().out
