"""Issue 64: the main job from a fresh clone with an empty compile cache reports its wall time
and its model's win rate (``experiments/main_job/fresh_clone.py``; the full measurement is
that script with no flags, minutes long). Here a tiny run of it: a clone of HEAD, an empty
``NUMBA_CACHE_DIR``, ``allfives train`` from the clone (compiling said as such, every stage
named off a terminal), then ``allfives eval`` against ``heuristic``, and the report."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "experiments" / "main_job" / "fresh_clone.py"

pytestmark = pytest.mark.slow  # an empty compile cache: a minute or more of numba


def load_script():
    spec = importlib.util.spec_from_file_location("fresh_clone", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_tiny_main_job_from_a_fresh_clone_reports_time_and_strength(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("numba")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    report = tmp_path / "report.json"
    code = load_script().main(["--games", "4", "--seed", "20261308", "--json", str(report),
                               "--train-args", "--total-steps", "300", "--eval-games", "2",
                               "--distill-epochs", "1"])
    out, _ = capfd.readouterr()
    assert code == 0, out[-3000:]
    data = json.loads(report.read_text())
    assert data["train_wall_s"] > 0 and data["games"] == 4 and 0 <= data["win_rate"] <= 1
    assert data["seed"] == 20261308 and len(data["ci95"]) == 2 and data["cpus"] >= 1
    assert "search distillation: evaluate the student, label 300 positions" in out
    for line in ("compiling the batched engine", "compiling: 4 kernel groups to go",
                 "compiling: done, 4 kernel groups", "evaluating: done", "labelling: done",
                 "fitting: done", "fresh_clone: the main job took"):
        assert line in out, (line, out[-3000:])
