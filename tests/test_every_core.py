"""Rollouts on every core by default: ``rollout_shards: auto`` is one shard per core of the
machine that starts the run (the unit of determinism, fixed in the run's config),
``rollout_workers: auto`` one worker per core this process may use, and the same config
plays the same games with any number of workers (tests/test_rollouts.py, buffer by buffer)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from allfives.cli import main  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, load_config  # noqa: E402
from allfives_train.games.shards import resolve_workers, shard_sizes  # noqa: E402
from allfives_train.games.workers import cores  # noqa: E402

CONFIGS = DEFAULT_CONFIG.parent
SELFPLAY = CONFIGS / "selfplay_2p.yaml"  # a ppo_batched config (the main job distills)
SMALL = {"n_envs": 32, "n_steps": 3, "net_arch": [16]}


def test_the_defaults_are_one_shard_and_one_worker_per_core() -> None:
    cfg = load_config(SELFPLAY)
    shards = cfg.value("rollout_shards")
    assert shards == min(cores(), 64) and cfg.value("rollout_workers") == "auto"
    assert cfg.to_dict()["fast"]["rollout_shards"] == shards  # the run's config.yaml
    assert load_config(None, {"rollout_shards": 16}).value("rollout_shards") == 16
    big = load_config(SELFPLAY, {"n_envs": 256, "n_steps": 32, "rollout_shards": 16})
    assert resolve_workers(big) == min(cores(), 16)
    assert resolve_workers(load_config(SELFPLAY, {"rollout_workers": None})) \
        == resolve_workers(big)  # null is auto, as before
    assert resolve_workers(load_config(SELFPLAY, {"n_envs": 8, "n_steps": 4})) == 1
    assert len(shard_sizes(big.n_envs, big.value("rollout_shards"))) == 16


def test_the_recipes_configs_keep_their_2_shards() -> None:
    for name in ("residual_2p", "residual_3p", "residual_4p_teams", "residual_five_up_2p",
                 "dmc_2p"):
        assert load_config(CONFIGS / f"{name}.yaml").value("rollout_shards") == 2, name


@pytest.mark.parametrize("value, says", [
    ("many", "rollout_workers='many': must be auto (one per core) or an integer >= 1"),
    ("0", "rollout_workers=0: must be auto")])
def test_a_bad_worker_count_is_one_line_exit_2(tmp_path: Path, value: str, says: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["train", "--rollout-workers", value, "--run-dir", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err, err
    assert not run.exists()
