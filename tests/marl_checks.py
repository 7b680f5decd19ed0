"""Shared helpers of the tests/test_integration_*.py files: the returns a whole game pays
(written out from docs/rules.md and the env docs, not taken from the env) and loading examples/."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from allfives_env.game.rules import Rules

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def expected_returns(rules: Rules, scores: list[int], winner: int | None, truncated: bool,
                     reward: str) -> list[float]:
    """Per seat, what a finished game pays under ``reward`` ("win" or "points")."""
    n_sides = rules.n_sides
    sides = [rules.side_of(s) for s in range(rules.players)]
    if reward == "points":
        mean = sum(scores) / n_sides
        return [(scores[sides[s]] - mean) / rules.target for s in range(rules.players)]
    if truncated or winner is None:
        return [0.0] * rules.players
    return [1.0 if sides[s] == winner else -1.0 / (n_sides - 1) for s in range(rules.players)]


def load_example(name: str) -> ModuleType:
    """``examples/<name>.py`` as a module (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"allfives_example_{name}",
                                                  EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
