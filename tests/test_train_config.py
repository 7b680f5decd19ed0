"""Training configs: the documented defaults, YAML files, overrides and their refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from allfives_train.config import (
    DEFAULT_CONFIG,
    MASKABLE_CONFIG,
    TrainConfig,
    field_help,
    flat_fields,
    load_config,
)
from allfives_train.configio import parse_opponents
from allfives_train.sections import ACTOR

_DIR = Path(__file__).resolve().parents[1] / "configs" / "train"
CONFIGS = [_DIR / "default.yaml", _DIR / "selfplay_2p.yaml", _DIR / "maskable_2p.yaml",
           *sorted(_DIR.glob("ppo_*.yaml"))]


def test_maskable_yaml_is_the_dataclass_defaults() -> None:
    assert load_config(MASKABLE_CONFIG) == TrainConfig()


def test_default_yaml_distills_search_from_the_heuristics_weights() -> None:
    cfg = load_config(DEFAULT_CONFIG)
    actor = cfg.section(ACTOR)
    assert (cfg.algo, actor.policy, actor.feature_start, cfg.init_from, actor.features) == (
        "search_distill", "action_features", "heuristic", None, 17)
    assert cfg.value("distill_teacher") == "search:sims=128,depth=2" and cfg.total_steps == 80_000
    # issue 64: 3 minutes, >= 60%
    assert (cfg.value("distill_epochs"), cfg.value("eval_games")) == (8, 200)


def test_selfplay_yaml_is_the_fast_self_play_job() -> None:
    cfg = load_config(_DIR / "selfplay_2p.yaml")
    actor = cfg.section(ACTOR)
    assert (cfg.algo, actor.policy, actor.feature_start, cfg.value("bc_teacher")) == (
        "ppo_batched", "action_features", "zero", None)
    # no bot as teacher
    assert {o["agent"] for o in cfg.value("opponents")} == {"self", "snapshots"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_shipped_config_loads(path: Path) -> None:
    load_config(path)


def test_every_field_is_documented() -> None:
    assert all(field_help(name) for name in flat_fields())


def test_overrides_win_and_are_type_checked(tmp_path: Path) -> None:
    cfg = load_config(DEFAULT_CONFIG, {"total_steps": 1000, "gamma": 1, "teams": None})
    assert cfg.total_steps == 1000 and cfg.gamma == 1.0 and isinstance(cfg.gamma, float)
    with pytest.raises(ValueError, match="players='two': expected"):
        load_config(None, {"players": "two"})
    with pytest.raises(ValueError, match="total_steps=True: expected int$"):
        load_config(None, {"total_steps": True})
    with pytest.raises(ValueError, match="anneal_lr=1: expected bool$"):  # the type's name
        load_config(None, {"anneal_lr": 1})
    with pytest.raises(ValueError, match="unknown config field"):
        load_config(None, {"n_env": 4})
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ValueError, match="mapping of field: value"):
        load_config(bad)


@pytest.mark.parametrize("change, message", [
    ({"vec_env": "ray"}, "dummy or subproc"),
    ({"net_arch": []}, "non-empty list"),
    ({"opponents": []}, "at least one entry"),
    ({"opponents": [{"agent": "greedy", "weight": -1}]}, "number >= 0"),
    ({"opponents": [{"agent": "greedy", "weight": 0}]}, "must not all be zero"),
    ({"opponents": [{"bot": "greedy"}]}, "entries look like"),
    ({"best_metric": "heuristic"}, "must be one of eval_opponents"),
    ({"n_envs": 0}, "integer >= 1"),
    ({"gamma": 1.5}, "gamma must be in"),
])
def test_bad_values_are_refused_naming_the_field(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_config(None, change)


def test_opponent_pool_syntax_on_the_command_line() -> None:
    assert parse_opponents(["greedy@2", "ckpt:runs/x/final@0.5", "snapshots"]) == [
        {"agent": "greedy", "weight": 2.0}, {"agent": "ckpt:runs/x/final", "weight": 0.5},
        {"agent": "snapshots", "weight": 1.0}]


def test_every_field_is_in_the_training_docs_table() -> None:
    """docs/training.md's tables are the dataclasses' (docs_build/config_tables.py)."""
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "training.md").read_text()
    missing = [s.dotted for s in flat_fields().values() if f"| `{s.dotted}` |" not in text]
    assert not missing, f"docs/training.md lacks rows for {missing}"
    spec = importlib.util.spec_from_file_location("config_tables",
                                                  root / "docs_build" / "config_tables.py")
    assert spec is not None and spec.loader is not None
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    assert tables.rewrite(check=True) == 0, "run python docs_build/config_tables.py"


def test_extends_a_config_is_that_config_plus_a_few_fields(tmp_path) -> None:
    import dataclasses

    from allfives_train.config import DEFAULT_CONFIG as _DEFAULT
    from allfives_train.config import load_config as _load

    base = _DEFAULT.parent / "residual_2p.yaml"
    child = tmp_path / "child.yaml"
    child.write_text(f"extends: {base}\nplayers: 3\nrules: {{target: 100}}\n")
    a, b = dataclasses.asdict(_load(base)), dataclasses.asdict(_load(child))
    assert {k for k in a if a[k] != b[k]} == {"players", "rules"}
    assert b["players"] == 3 and b["rules"] == {"target": 100}
    grandchild = tmp_path / "grandchild.yaml"
    grandchild.write_text("extends: child.yaml\nrules: {hand_size: 7}\n")
    assert _load(grandchild).rules == {"target": 100, "hand_size": 7}  # rules merge by key


@pytest.mark.parametrize("text,message", [
    ("extends: loop.yaml\n", "makes a loop"),
    ("extends: [a]\n", "extends must be the path"),
    ("extends: missing.yaml\n", "no such file beside it"),
])
def test_a_bad_extends_is_one_line(tmp_path, text: str, message: str) -> None:
    from allfives_train.config import load_config as _load

    path = tmp_path / "loop.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as err:
        _load(path)
    assert "\n" not in str(err.value)


def test_train_help_is_short_and_help_config_tells_what_a_bare_train_runs(capsys) -> None:
    from allfives.cli import main as cli_main
    from allfives_train.config import DEFAULT_CONFIG as _DEFAULT
    from allfives_train.config import load_config as _load

    with pytest.raises(SystemExit):
        cli_main(["train", "--help"])
    text = capsys.readouterr().out
    assert len(text.splitlines()) <= 120 and "--help-config" in text
    assert "(default 'maskable_ppo')" not in text and "150000" not in text  # no stale defaults
    assert cli_main(["train", "--help-config"]) == 0
    out = capsys.readouterr().out
    cfg = _load(_DEFAULT)
    assert f"algo: {cfg.algo!r}" in out and f"total_steps: {cfg.total_steps!r}" in out
    assert out.count("\n\n") >= 40  # every field, each with its meaning
