"""Rollouts on every core by default: ``rollout_shards: auto`` is one shard per core of the
machine that starts the run (the unit of determinism, fixed in the run's config),
``rollout_workers: auto`` one worker per core this process may use, and the same config
plays the same games with any number of workers (1 and 2 here, buffer by buffer, at 16
shards)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from allfives_env.cli import main  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, TrainConfig, load_config  # noqa: E402
from allfives_train.fast_net import features_of, make_net  # noqa: E402
from allfives_train.rollouts import Rollouts  # noqa: E402
from allfives_train.shards import BUFFERS, resolve_workers, shard_sizes  # noqa: E402
from allfives_train.workers import cores  # noqa: E402

CONFIGS = DEFAULT_CONFIG.parent
SMALL = {"n_envs": 32, "n_steps": 3, "net_arch": [16]}


def test_the_defaults_are_one_shard_and_one_worker_per_core() -> None:
    cfg = TrainConfig()
    assert cfg.rollout_shards == min(cores(), 64) and cfg.rollout_workers == "auto"
    assert cfg.to_dict()["rollout_shards"] == cfg.rollout_shards  # the run's config.yaml
    assert TrainConfig(rollout_shards=16).rollout_shards == 16
    big = load_config(DEFAULT_CONFIG, {"n_envs": 256, "n_steps": 32, "rollout_shards": 16})
    assert resolve_workers(big) == min(cores(), 16)
    assert resolve_workers(load_config(DEFAULT_CONFIG, {"rollout_workers": None})) \
        == resolve_workers(big)  # null is auto, as before
    assert resolve_workers(load_config(DEFAULT_CONFIG, {"n_envs": 8, "n_steps": 4})) == 1
    assert len(shard_sizes(big.n_envs, big.rollout_shards)) == 16


def test_the_recipes_configs_keep_their_2_shards() -> None:
    for name in ("residual_2p", "residual_3p", "residual_4p_teams", "residual_five_up_2p",
                 "dmc_2p"):
        assert load_config(CONFIGS / f"{name}.yaml").rollout_shards == 2, name


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


def rollout(workers: int) -> tuple[dict, np.ndarray]:
    """Two rollouts of the default config (16 shards of 2 games) on ``workers`` workers."""
    torch.set_num_threads(1)
    cfg = load_config(DEFAULT_CONFIG, {**SMALL, "rollout_workers": workers, "rollout_shards": 16})
    torch.manual_seed(0)
    agent = make_net(cfg)
    envs = Rollouts(cfg, agent, features_of(agent))
    try:
        assert envs.describe() == {"shards": 16, "workers": workers,
                                   "where": "this process" if workers == 1 else "processes"}
        envs.set_self(agent.numpy_policy().arrays())
        envs.reset(seed=5)
        envs.collect(agent, SMALL["n_steps"], None, torch.device("cpu"))
        with torch.no_grad():  # new weights reach the workers
            for p in agent.parameters():
                p.add_(0.01)
        return envs.collect(agent, SMALL["n_steps"], None, torch.device("cpu"))
    finally:
        envs.close()


def test_one_and_two_workers_play_the_same_games_at_the_default_shards() -> None:
    (one, obs1), (two, obs2) = rollout(1), rollout(2)
    for key in BUFFERS:
        assert one[key].shape[:2] == (SMALL["n_steps"], SMALL["n_envs"]), key
        assert torch.equal(one[key], two[key]), key
    assert np.array_equal(obs1, obs2) and one["pool"] == two["pool"]
