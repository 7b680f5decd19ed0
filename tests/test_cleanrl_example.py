"""The CleanRL-style example trains through ``AllFivesVectorEnv`` (a tiny budget)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("numba")
pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cleanrl_ppo_vector.py"


def _load():
    spec = importlib.util.spec_from_file_location("cleanrl_ppo_vector", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("opponent", ["greedy", "self"])
def test_example_trains_a_few_updates(opponent: str) -> None:
    out = _load().main(["--total-steps", "1024", "--num-envs", "16", "--num-steps", "32",
                        "--opponent", opponent, "--update-epochs", "1"])
    assert out["steps"] == 1024
