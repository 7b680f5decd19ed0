"""The reference curves command (``python -m allfives_train.baselines``): its arguments, its
table and figures on synthetic rows, its resume logic, and (slow) the quick mode end to end."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from allfives_train.baselines import cli, report
from allfives_train.baselines.learners import SUPPORTED, Cell, cells, command, missing
from allfives_train.baselines.runner import tree_cpu


def rows_for(learner: str, view: str, seeds: int = 2, k: int = 3) -> list[dict[str, Any]]:
    out = []
    for seed in range(seeds):
        for i in range(1, k + 1):
            out.append({"learner": learner, "view": view, "seed": seed, "k": i,
                        "steps": 1000 * i, "cpu_s": 20.0 * i, "wall_s": 25.0 * i,
                        "greedy": 0.1 * i, "greedy_ci95": [0.05 * i, 0.15 * i],
                        "greedy_games": 20, "heuristic": 0.05 * i + 0.01 * seed,
                        "heuristic_ci95": [0.0, 0.1 * i], "heuristic_games": 20})
    return out


@pytest.mark.parametrize("argv, words", [
    (["--cpu-minutes", "0"], "--cpu-minutes"),
    (["--seeds", "0"], "--seeds"),
    (["--games", "1"], "--games"),
    (["--learners", "dqn"], "--learners dqn"),
    (["--views", "pixels"], "--views pixels"),
    (["--workers", "0"], "--workers"),
    (["--seeds", "three"], "--seeds"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, capsys: Any,
                                                         argv: list[str], words: str) -> None:
    out = tmp_path / "out"
    code = None
    try:
        code = cli.main([*argv, "--out", str(out)])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and words in err
    assert not out.exists()


def test_out_folder_with_foreign_files_is_refused(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "mine.txt").write_text("keep")
    assert cli.main(["--quick", "--out", str(tmp_path)]) == 2
    assert "did not write" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_plan_runs_each_learner_on_the_views_it_reads() -> None:
    plan = cells(["sb3", "dmc", "fast"], ["raw", "facts"], seeds=2)
    one = ["sb3-raw", "sb3-facts", "dmc-raw", "dmc-facts", "fast-raw", "fast-facts"]
    assert [c.name for c in plan] == [f"{n}-s{seed}" for seed in (0, 1) for n in one]
    assert all(c.view in SUPPORTED[c.learner] for c in plan)
    assert [c.name for c in cells(["dmc"], ["heuristic"], 1)] == ["dmc-heuristic-s0"]


def test_commands_start_from_zero_against_heuristic(tmp_path: Path) -> None:
    dmc = command(Cell("dmc", "heuristic", 1), tmp_path, 60.0, 5)
    assert dmc[dmc.index("--init-from") + 1] == "null"
    assert dmc[dmc.index("--feature-start") + 1] == "zero"
    rllib = command(Cell("rllib", "raw", 0), tmp_path, 60.0, 5)
    assert rllib[rllib.index("--rllib-bc-teacher") + 1] == "null"
    for learner in ("fast", "dmc"):  # raw: the MLP on the observation; facts: from zero
        raw = command(Cell(learner, "raw", 0), tmp_path, 60.0, 5)
        assert raw[raw.index("--policy") + 1] == "mlp" and "--action-view" not in raw
        facts = command(Cell(learner, "facts", 0), tmp_path, 60.0, 5)
        assert facts[facts.index("--action-view") + 1] == "facts"
        assert facts[facts.index("--feature-start") + 1] == "zero"
    for cell in (Cell("sb3", "facts", 0), Cell("cleanrl", "raw", 2), Cell("fast", "raw", 0)):
        cmd = command(cell, tmp_path, 60.0, 5)
        assert any(a.startswith("heuristic") for a in cmd)
        assert str(cell.seed) == cmd[cmd.index("--seed") + 1]


def test_table_and_figures_from_synthetic_rows(tmp_path: Path) -> None:
    rows = rows_for("sb3", "raw") + rows_for("dmc", "heuristic", seeds=1)
    text = report.table(rows)
    lines = text.strip().splitlines()
    assert len(lines) == 4  # header, rule, two rows
    assert "`raw`" in lines[2] and "2 |" in lines[2] and "30.0%" in lines[2]  # greedy at k=3
    assert "seeds 15.0%-16.0%" in lines[2]  # heuristic: 0.15 and 0.16 at the last snapshot
    assert "[0.0%, 30.0%]" in lines[3]  # one seed: its interval
    for x in report.FIGURES:
        path = report.plot(rows, x, tmp_path / f"{x}.png", "t")
        assert path.stat().st_size > 1000
    assert report.mean_curve(report.series(rows)[("sb3", "raw")], "cpu_s", "heuristic") == (
        [20.0, 40.0, 60.0], pytest.approx([0.055, 0.105, 0.155]))
    assert report.check_rows(rows) == []


def test_check_rows_finds_inconsistent_curves() -> None:
    rows = rows_for("fast", "raw", seeds=1)
    rows[2]["steps"] = 10
    rows[0]["greedy"] = 1.5
    problems = report.check_rows(rows)
    assert len(problems) == 2 and any("snapshot 3" in p for p in problems)


def test_resume_reuses_a_finished_run_of_the_same_budget(tmp_path: Path) -> None:
    cell = Cell("fast", "raw", 0)
    path, finished = cli.pick_run(tmp_path, cell, 120.0, 2)
    assert (path.name, finished) == ("try1", False)
    path.mkdir(parents=True)  # an interrupted attempt: a new one next time
    assert cli.pick_run(tmp_path, cell, 120.0, 2) == (path.with_name("try2"), False)
    done = {"cpu_budget_s": 120.0, "points": [{"k": 1}], "missing_points": [2]}
    (path / "done.json").write_text(json.dumps(done))
    assert cli.pick_run(tmp_path, cell, 120.0, 2) == (path, True)
    assert cli.pick_run(tmp_path, cell, 60.0, 2)[1] is False  # another budget: trained anew


def test_tree_cpu_counts_this_process() -> None:
    end = time.process_time() + 0.2
    while time.process_time() < end:
        pass
    if not os.path.isdir("/proc"):
        pytest.skip("no /proc")
    assert tree_cpu(os.getpid()) >= 0.2


@pytest.mark.slow
def test_quick_mode_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "quick"
    assert cli.main(["--quick", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    ran = {(c.learner, c.view) for c in cells(list(SUPPORTED), ["raw", "facts", "heuristic"], 1)
           if missing(c.learner) is None}
    assert {(r["learner"], r["view"]) for r in rows} == ran
    for key, by_seed in report.series(rows).items():
        for seed_rows in by_seed.values():
            if key[0] != "rllib":  # RLlib's start-up may leave its first point empty
                assert [r["k"] for r in seed_rows] == [1, 2]
    assert report.check_rows(rows) == []
    assert all(0 <= r[o] <= 1 and r[f"{o}_games"] == 20 for r in rows
               for o in ("greedy", "heuristic"))
    for name in ("table.md", *report.FIGURES.values(), "summary.json"):
        assert (out / name).stat().st_size > 0
    assert cli.main(["--quick", "--out", str(out)]) == 0  # resumed: nothing trained again
    assert not list(out.glob("runs/*/try2"))


def test_single_file_learner_stops_at_its_cpu_budget_with_snapshots(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    pytest.importorskip("torch")
    import importlib.util

    from allfives_train.baselines.learners import EXAMPLE

    if not EXAMPLE.is_file():
        pytest.skip("no source checkout")
    spec = importlib.util.spec_from_file_location("cleanrl_budget", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    budget = time.process_time() + 1.0  # the process's CPU time counts from its start
    out = example.main(["--view", "raw", "--total-steps", "100000000", "--num-envs", "16",
                        "--num-steps", "16", "--update-epochs", "1", "--cpu-seconds",
                        str(budget), "--snapshots", "2", "--snapshot-dir", str(tmp_path)])
    assert out["steps"] < 100_000_000 and out["cpu_minutes"] * 60 >= budget
    points = [json.loads(x) for x in (tmp_path / "points.jsonl").read_text().splitlines()]
    assert [p["k"] for p in points] == [1, 2]
    assert points[0]["steps"] <= points[1]["steps"] == out["steps"]
    assert points[1]["cpu_s"] >= budget and points[0]["cpu_s"] >= budget / 2
    for k in (1, 2):
        assert (tmp_path / f"snap_{k}" / "card.json").is_file()


def test_every_allfives_train_command_loads_a_from_zero_config(tmp_path: Path,
                                                               capsys) -> None:
    """Each learner's ``allfives train`` command (fast, dmc, rllib on each view) loads without
    a note, against heuristic alone, from no checkpoint, reading what its view says."""
    import argparse

    from allfives_train.cli import _load_train_config, add_arguments, chosen_algo
    from allfives_train.sections import ACTOR, POOL

    for cell in cells(["fast", "dmc", "rllib"], ["raw", "facts", "heuristic"], 1):
        cmd = command(cell, tmp_path, 60.0, 4)
        parser = argparse.ArgumentParser()
        add_arguments(parser)
        args = parser.parse_args(cmd[cmd.index("train") + 1:])
        cfg = _load_train_config(args, chosen_algo(args))
        assert not isinstance(cfg, int), cell
        assert cfg.section(POOL).opponents == [{"agent": "heuristic", "weight": 1.0}]
        assert cfg.init_from is None
        actor = cfg.section(ACTOR)
        view = None if cell.view in ("raw", "heuristic") else cell.view
        assert actor.action_view == view, cell
        if actor.policy == "action_features" and cell.learner != "rllib" or view:
            assert actor.feature_start == "zero", cell
        assert capsys.readouterr().err == "", cell  # no note: every flag is its own field's
