"""Without numba the core still imports and the batched engine says how to install it."""

from __future__ import annotations

import subprocess
import sys

import pytest

CODE = """
import sys
sys.modules["numba"] = None  # import numba now raises ImportError
import allfives_env, allfives_env.env, allfives_env.batched_engine.games
import allfives_agents.batched.bots
from allfives_env.benchmarks import bench_batched
assert not bench_batched.available() and bench_batched.specs(2) == []
from allfives_env.game.rules import make_rules
try:
    allfives_env.batched_engine.games.BatchedGames(make_rules(), 4)
except RuntimeError as exc:
    print(exc)
from allfives.cli import main
sys.exit(main(["simulate", "--engine", "batched", "--games", "1", "--agents", "greedy"]))
"""


def test_install_line_without_numba() -> None:
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout.strip() == "the batched engine needs numba: pip install 'allfives[fast]'"
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "pip install 'allfives[fast]'" in err[0]


def test_batch_size_is_checked() -> None:
    pytest.importorskip("numba")
    from allfives_env.batched_engine.games import BatchedGames
    from allfives_env.game.rules import make_rules

    for bad in (0, 16_385, 2.5, True):
        with pytest.raises(ValueError, match="1..16384"):
            BatchedGames(make_rules(), bad)  # type: ignore[arg-type]
