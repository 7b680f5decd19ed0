"""examples/openspiel_ismcts.py runs (with tiny budgets); docs/openspiel.md's snippets run in
tests/test_doc_blocks.py."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

ROOT = Path(__file__).resolve().parents[1]


def test_example_plays_ismcts_against_search(capsys: pytest.CaptureFixture[str]) -> None:
    example = runpy.run_path(str(ROOT / "examples" / "openspiel_ismcts.py"))
    results = example["main"](["--sims", "4", "--games", "1", "--search", "search:sims=8",
                               "--game", "allfives(preset=five_up,target=40)"])
    assert len(results) == 1 and abs(sum(results[0])) < 1e-9
    assert "record verified" in capsys.readouterr().out
