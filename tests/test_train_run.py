"""A tiny ``allfives train`` end to end: saves, resumes, and its checkpoint plays as an opponent
in ``eval`` and in training; bad configs are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from allfives.cli import main  # noqa: E402
from allfives_train.config import MASKABLE_CONFIG  # noqa: E402

TINY = ["--config", str(MASKABLE_CONFIG), "--n-envs", "2", "--n-steps", "64",
        "--batch-size", "64", "--n-epochs", "1",
        "--net-arch", "16", "16", "--eval-games", "4", "--eval-every", "128",
        "--checkpoint-every", "128", "--snapshot-every", "128", "--quiet",
        "--eval-opponents", "random", "greedy", "--bc-teacher", "null"]


def train(run_dir: Path, *extra: str) -> int:
    return main(["train", "--run-dir", str(run_dir), *TINY, *extra])


def card(path: Path) -> dict:
    return json.loads((path / "card.json").read_text())


@pytest.mark.slow
def test_train_save_resume_and_play_as_opponent(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    assert train(run, "--total-steps", "256") == 0
    first = card(run / "final")
    assert first["steps"] == 256 and first["players"] == 2
    assert first["config"]["net_arch"] == [16, 16]
    assert {"random", "greedy"} <= set(first["eval"]["results"])
    for name in ("model.zip", "policy.npz", "card.md", "config.yaml"):
        assert (run / "final" / name).is_file()
    assert (run / "learning_curve.png").stat().st_size > 1000
    assert (run / "latest.txt").read_text().strip() == "step_000000000256"

    assert train(run, "--total-steps", "512", "--resume") == 0  # continues, not restarts
    second = card(run / "final")
    assert second["steps"] == 512
    assert [h["steps"] for h in second["eval_history"]] == [0, 128, 256, 384, 512]
    assert len(list((run / "snapshots").glob("snap_*.npz"))) == 4

    ckpt = f"ckpt:{run / 'final'}"
    assert main(["eval", "--agents", ckpt, "greedy", "--games", "4", "--workers", "1",
                 "--no-progress"]) == 0
    assert "ckpt:" in capsys.readouterr().out

    other = tmp_path / "other"  # a training run with the checkpoint in its opponent pool
    assert train(other, "--total-steps", "128", "--opponents", f"{ckpt}@2", "greedy@1",
                 "--eval-opponents", ckpt, "greedy", "--best-metric", "greedy") == 0
    results = card(other / "final")["eval"]["results"]
    assert ckpt in results and results[ckpt]["games"] == 4


@pytest.mark.slow
def test_teams_run_with_imitation_warm_start(tmp_path: Path) -> None:
    run = tmp_path / "teams"
    assert train(run, "--players", "4", "--total-steps", "128", "--bc-teacher", "greedy",
                 "--bc-samples", "200", "--bc-epochs", "1") == 0
    c = card(run / "final")
    assert c["players"] == 4 and c["teams"] is True
    assert c["config"]["maskable_ppo"]["bc_teacher"] == "greedy"
    assert c["warm_start"]["teacher"] == "greedy" and c["warm_start"]["decisions"] >= 200
    saved = run / "bc_data.npz"  # the teacher's decisions are kept for reuse
    again = tmp_path / "again"
    assert train(again, "--players", "4", "--total-steps", "128", "--bc-data", str(saved),
                 "--bc-epochs", "1") == 0
    assert not (again / "bc_data.npz").exists()  # read, not collected


def test_unreadable_warm_start_data_is_refused(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"no")
    assert train(tmp_path / "r", "--total-steps", "128", "--bc-data", str(bad)) == 2
    assert "not readable warm-start data" in capsys.readouterr().err


def test_resume_without_a_checkpoint_and_bad_fields_are_refused(tmp_path: Path, capsys
                                                                ) -> None:
    assert train(tmp_path / "empty", "--resume") == 2
    assert "no checkpoint to resume" in capsys.readouterr().err
    assert train(tmp_path / "empty", "--total-steps", "64") == 0
    assert train(tmp_path / "empty", "--total-steps", "64") == 2  # not over an existing run
    assert "holds a finished run" in capsys.readouterr().err  # and how to train it longer
    assert train(tmp_path / "x", "--set", "gama=0.9") == 2  # --set takes rule options
    assert "unknown rule option 'gama'" in capsys.readouterr().err
    assert train(tmp_path / "x", "--set", "target=") == 2
    assert "'target=' has an empty value" in capsys.readouterr().err
    assert train(tmp_path / "x", "--players", "5") == 2
    assert "players=5: players must be 2, 3 or 4" in capsys.readouterr().err
    assert train(tmp_path / "x", "--opponents", "greedy@lots") == 2
    assert "weight after @ must be a number" in capsys.readouterr().err


@pytest.mark.slow
def test_subprocess_envs_and_three_seats(tmp_path: Path) -> None:
    run = tmp_path / "sub"
    assert train(run, "--players", "3", "--vec-env", "subproc", "--total-steps", "128",
                 "--opponents", "greedy@1", "snapshots@1") == 0
    c = card(run / "final")
    assert c["players"] == 3 and c["steps"] == 128
    assert c["config"]["maskable_ppo"]["vec_env"] == "subproc"
