"""``allfives bench --train``: strength per minute (allfives_train/speedrun.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from allfives.cli import main  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_train.benchmarks.speedrun import (  # noqa: E402
    DEFAULT_THRESHOLDS,
    PolicyClock,
    minutes_to_reach,
    thresholds_for,
)

TINY = """\
algo: ppo_batched
policy: action_features
feature_start: zero
preset: all_fives
players: 2
total_steps: 100000000
n_envs: 16
n_steps: 16
batch_size: 256
n_epochs: 1
rollout_shards: 1
opponents: [{agent: self, weight: 1.0}]
snapshot_every: 100000
checkpoint_every: 1000000
"""


def _point(seconds: float, rate: float) -> dict[str, Any]:
    return {"train_s": seconds, "win_rate": rate}


def test_minutes_to_reach_takes_the_first_point_at_or_above() -> None:
    series = [_point(240, 0.62), _point(60, 0.30), _point(120, 0.50), _point(180, 0.45)]
    got = minutes_to_reach(series, (0.50, 0.60, 0.65))
    assert got == {"0.50": 2.0, "0.60": 4.0, "0.65": None}  # 0.65: never reached


def test_minutes_to_reach_of_an_empty_series_is_never() -> None:
    assert minutes_to_reach([], (0.5,)) == {"0.50": None}


def test_thresholds_per_setting() -> None:
    assert thresholds_for(make_rules(players=2)) == (0.50, 0.60, 0.65)
    assert thresholds_for(make_rules(players=3)) == DEFAULT_THRESHOLDS == (0.50, 0.55, 0.60)


class _Policy:
    def arrays(self) -> dict[str, np.ndarray]:
        return {"w": np.zeros(2, dtype=np.float32)}


class _Run:
    """What the clock hook reads of a run: its wall time, steps, policy and stop flag."""

    def __init__(self) -> None:
        self.now, self.steps, self.stop = 0.0, 0, False

    def wall(self) -> float:
        return self.now

    def policy(self) -> _Policy:
        return _Policy()


def test_policy_clock_saves_on_schedule_and_stops_at_the_budget(tmp_path: Path) -> None:
    points: list[dict[str, Any]] = []
    hook = PolicyClock(tmp_path, points, every=10.0, budget=35.0, offset=5.0, stage="ppo")
    run: Any = _Run()
    hook.start(run)
    for now in (4.0, 11.0, 12.0, 23.0, 31.0):
        run.now, run.steps = now + hook.excluded, run.steps + 100
        hook.rollout_end(run, {})
        if run.stop:
            break
    hook.finish(run)
    assert [p["steps_in_stage"] for p in points] == [0, 200, 400, 500]
    assert [round(p["train_s"]) for p in points] == [5, 16, 28, 36]  # offset 5 added
    assert run.stop  # 5 + 31 >= 35
    index = json.loads((tmp_path / "points.json").read_text())
    assert index == points and all((tmp_path / p["policy"]).is_file() for p in points)


@pytest.mark.parametrize("flags, says", [
    (["--train", "no/such.yaml"], "no such file"),
    (["--minutes", "-1"], "--minutes -1.0: must be a finite positive number of minutes"),
    (["--minutes", "inf"], "--minutes inf: must be a finite positive number of minutes"),
    (["--minutes", "1e300"], "at most 1.66667e+07"),
    (["--every", "0"], "--every 0.0: must be a finite positive number of seconds"),
    (["--every", "nan"], "--every nan: must be a finite positive number of seconds"),
    (["--games", "0"], "--games must be at least 1"),
    (["--against", "nobody"], "nobody"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: Any, flags: list[str],
                                          says: str) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    run_dir = tmp_path / "run"
    argv = ["bench", "--train", str(config), "--run-dir", str(run_dir), *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err and "Traceback" not in err
    assert not run_dir.exists()  # nothing made


def test_a_used_run_dir_is_refused(tmp_path: Path, capsys: Any) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine")
    assert main(["bench", "--train", str(config), "--run-dir", str(tmp_path / "run")]) == 2
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["notes.txt"]


@pytest.mark.slow  # about 30 s: 18 s of training, then 8 games for each saved policy
def test_end_to_end_table_and_json(tmp_path: Path, capsys: Any) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    out = tmp_path / "bench.json"
    argv = ["bench", "--train", str(config), "--minutes", "0.3", "--every", "5", "--games",
            "8", "--run-dir", str(tmp_path / "run"), "--json", str(out), "--workers", "2"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    result = json.loads(out.read_text())
    assert "minutes to first reach" in text and "machine:" in text and result["date"] in text
    assert result["machine"]["cpu"] and result["against"] == "heuristic"
    points = result["points"]
    assert len(points) >= 3 and points[0]["steps_in_stage"] == 0
    assert [p["train_s"] for p in points] == sorted(p["train_s"] for p in points)
    assert 0.3 * 60 <= points[-1]["train_s"] <= 0.3 * 60 + 10  # stopped at the budget
    assert all(p["games"] == 8 and 0 <= p["win_rate"] <= 1 for p in points)
    assert set(result["minutes_to"]) == {"0.50", "0.60", "0.65"}
    assert json.loads((tmp_path / "run" / "bench.json").read_text()) == result


@pytest.mark.slow  # about 15 s: two short stages
def test_a_recipe_reports_every_stage_on_one_clock(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "tiny.yaml").write_text(TINY)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("recipe: tiny\nstages:\n"
                      "- {name: first, extends: tiny.yaml, total_steps: 2048}\n"
                      "- {name: second, extends: tiny.yaml, algo: dmc, total_steps: 2048, "
                      "init_from: '{previous}'}\n")
    argv = ["bench", "--train", str(recipe), "--every", "1", "--games", "2", "--run-dir",
            str(tmp_path / "run"), "--workers", "1"]
    assert main(argv) == 0
    result = json.loads((tmp_path / "run" / "bench.json").read_text())
    stages = [p["stage"] for p in result["points"]]
    assert stages[0] == "first" and stages[-1] == "second"  # the stage ends at least
    times = [p["train_s"] for p in result["points"]]
    assert times == sorted(times) and result["train_s"] >= times[-1]
    assert (tmp_path / "run" / "recipe" / "2_second" / "final" / "card.json").is_file()
