"""Recipes (train/recipe.py): one config with stages, one command from nothing, each stage from
the one before, continued by the same command after a stop; the shipped recipes are valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("numba")

from allfives.cli import main  # noqa: E402
from allfives_train.recipe import check_stage, load_recipe, stage_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted((ROOT / "configs" / "recipes").glob("*.yaml"))
TRAIN = ROOT / "configs" / "train"
FAST = {"device": "cpu", "n_envs": 8, "n_steps": 16, "batch_size": 64, "n_epochs": 1,
        "net_arch": [16, 16], "eval_games": 2, "eval_every": 128, "checkpoint_every": 128,
        "snapshot_every": 64, "eval_opponents": ["greedy"], "best_metric": "greedy",
        "total_steps": 256}


def _recipe(tmp_path: Path) -> Path:
    """A two-stage recipe: PPO from the heuristic's weights, then search distillation of it
    with the network inside the teacher, both tiny."""
    ppo = {"name": "ppo", "extends": str(TRAIN / "residual_2p.yaml"), **FAST}
    distill = {"name": "distill", "extends": str(TRAIN / "distill_2p.yaml"),
               "init_from": "{previous}", "distill_teacher": "search:net={previous},sims=8",
               "distill_shard_games": 1, "distill_epochs": 2, "eval_games": 2,
               "total_steps": 200, "device": "cpu"}
    path = tmp_path / "tiny.yaml"
    path.write_text(json.dumps({"recipe": "tiny", "run_dir": str(tmp_path / "run"),
                                "stages": [ppo, distill]}))
    return path


@pytest.mark.parametrize("path", RECIPES, ids=[p.stem for p in RECIPES])
def test_every_shipped_recipe_is_valid_and_makes_its_models_kind(path: Path) -> None:
    recipe = load_recipe(path)
    model = json.loads((ROOT / "checkpoints" / path.stem / "card.json").read_text())
    for k in range(len(recipe.stages)):
        check_stage(recipe, k, {})
    first = stage_config(recipe, 0, {})
    assert first.init_from is None  # from nothing
    last = recipe.stages[-1].fields
    assert (last.get("players", 2), last.get("preset", "all_fives")) == \
        (model["players"], model["rules"]["preset"])
    assert last.get("features", 9) == len(model["policy"]["features"] or [0] * 9) or \
        model["policy"]["kind"].endswith("/1")


@pytest.mark.slow
def test_a_recipe_runs_every_stage_from_the_one_before(tmp_path: Path) -> None:
    path = _recipe(tmp_path)
    assert main(["train", "--config", str(path), "--quiet"]) == 0
    run = tmp_path / "run"
    card = json.loads((run / "final" / "card.json").read_text())
    assert [s["name"] for s in card["recipe"]["stages"]] == ["ppo", "distill"]
    assert card["recipe"]["command"] == f"allfives train --config {path}"
    assert card["recipe"]["wall_time_s"] == pytest.approx(
        sum(s["wall_time_s"] for s in card["recipe"]["stages"]), abs=0.2)
    text = (run / "final" / "card.md").read_text()  # the card a reader opens says it too
    assert f"allfives train --config {path}" in text and "| `distill` | `search_distill` |" in text
    stage2 = json.loads((run / "2_distill" / "final" / "card.json").read_text())
    assert stage2["config"]["init_from"] == str(run / "1_ppo" / "final")
    teacher = stage2["config"]["search_distill"]["teacher"]
    assert teacher == f"search:net={run / '1_ppo' / 'final'},sims=8"
    before = (run / "1_ppo" / "final" / "policy.npz").stat().st_mtime_ns
    assert main(["train", "--config", str(path), "--quiet"]) == 0  # everything done: no work
    assert (run / "1_ppo" / "final" / "policy.npz").stat().st_mtime_ns == before


@pytest.mark.slow
def test_the_same_recipe_from_nothing_makes_the_same_model(tmp_path: Path) -> None:
    """"This command, from nothing, gives that model": two runs of one recipe in two folders
    write the same label shards and the same network, bit for bit (seeded PPO on the batched
    engine, seeded labels, a seeded fit; nothing depends on the clock or the folder)."""
    import numpy as np

    runs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        assert main(["train", "--config", str(_recipe(tmp_path / name)), "--quiet"]) == 0
        runs.append(tmp_path / name / "run")
    a, b = (np.load(r / "final" / "policy.npz", allow_pickle=False) for r in runs)
    assert sorted(a.files) == sorted(b.files)
    for key in a.files:
        assert np.array_equal(a[key], b[key]), key
    shards = [sorted((r / "2_distill" / "labels").glob("shard_*.npz")) for r in runs]
    assert [p.name for p in shards[0]] == [p.name for p in shards[1]] and shards[0]
    for x, y in zip(*shards):
        assert x.read_bytes() == y.read_bytes(), x.name


@pytest.mark.slow
def test_a_stopped_recipe_continues_with_the_same_command(tmp_path: Path, monkeypatch,
                                                         capsys) -> None:
    import allfives_train.algorithms.search_distill.trainer as distill
    from allfives_train.algorithms.maskable_ppo.trainer import TrainingInterrupted

    path = _recipe(tmp_path)
    real = distill.train

    def stop(cfg, **kwargs):  # Ctrl-C as stage 2 starts: what the trainers raise
        raise TrainingInterrupted(cfg.resolved_run_dir(), None, 0)

    monkeypatch.setattr(distill, "train", stop)
    assert main(["train", "--config", str(path), "--quiet"]) == 130
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith(f"Continue the recipe with: allfives train --config {path}"), err
    run = tmp_path / "run"
    assert (run / "1_ppo" / "final" / "card.json").is_file()
    assert not (run / "final").exists()
    monkeypatch.setattr(distill, "train", real)
    assert main(["train", "--config", str(path), "--quiet"]) == 0
    assert (run / "final" / "card.json").is_file()


@pytest.mark.parametrize("text,message", [
    ('{"stages": []}', "stages must be a list"),
    ('{"stages": [{"algo": "dmc"}]}', "needs a name"),
    ('{"stages": [{"name": "a"}, {"name": "a"}]}', "two stages are called"),
    ('{"stages": [{"name": "a", "init_from": "{previous}"}]}', "the first stage has no"),
    ('{"stages": [{"name": "a", "init_from": "{stage:b}"}, {"name": "b"}]}', "not an earlier"),
    ('{"stages": [{"name": "a", "gamma": "x"}]}', "gamma"),
    ('{"stages": [{"name": "a"}], "seed": 1}', "unknown recipe field"),
])
def test_a_bad_recipe_is_one_line_before_any_work(tmp_path: Path, capsys, text: str,
                                                  message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace('"run_dir"', '"x"'))
    assert main(["train", "--config", str(path), "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "r").exists()
