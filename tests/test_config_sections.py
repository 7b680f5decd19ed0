"""Config sections (train/sections.py): a section's fields under its key in the YAML, or by
their flat names (the flags'); the same config either way, never both in one mapping; files
that extend others merge field by field; a run writes its algo's sections and reads them back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from allfives_train import algos
from allfives_train.config import DEFAULT_CONFIG, TrainConfig, flat_fields, load_config
from allfives_train.sections import EVALUATION, POOL

CONFIGS = DEFAULT_CONFIG.parent
DMC = CONFIGS / "dmc_2p.yaml"


def _write(folder: Path, name: str, data: dict) -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_nested_and_flat_spellings_are_the_same_config(tmp_path: Path) -> None:
    nested = _write(tmp_path, "a.yaml", {"algo": "dmc", "init_from": None,
                                         "dmc": {"epsilon": 0.2, "td_lambda": 0.5},
                                         "evaluation": {"games": 40}})
    flat = _write(tmp_path, "b.yaml", {"algo": "dmc", "init_from": None, "dmc_epsilon": 0.2,
                                       "dmc_lambda": 0.5, "eval_games": 40})
    a, b = load_config(nested), load_config(flat)
    assert a == b and a.section(EVALUATION).games == 40 and a.value("dmc_lambda") == 0.5


def test_every_shipped_config_is_sectioned_and_loads_as_its_flat_twin(tmp_path: Path) -> None:
    for path in sorted(CONFIGS.glob("*.yaml")):
        cfg = load_config(path)
        flat = {name: cfg.value(name) for name in flat_fields()}
        assert load_config(_write(tmp_path, path.name, flat)) == cfg, path
        top = yaml.safe_load(path.read_text())
        assert not set(top) & {n for n, s in flat_fields().items() if s.section}, path


@pytest.mark.parametrize("data, says", [
    ({"dmc_epsilon": 0.1, "dmc": {"epsilon": 0.2}},
     "sets dmc_epsilon twice (as dmc_epsilon and as dmc.epsilon): keep one"),
    ({"dmc": {"epsilonn": 0.1}}, "dmc.epsilonn (did you mean dmc.epsilon"),
    ({"dmc": 0.1}, "dmc: a section is a mapping of field: value, its fields epsilon, scale"),
    ({"evaluation": {"games": "many"}}, "eval_games='many': expected int"),
])
def test_a_bad_section_is_refused_in_one_line(tmp_path: Path, data: dict, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)) as caught:
        load_config(_write(tmp_path, "bad.yaml", {"algo": "dmc", "init_from": None, **data}))
    assert "\n" not in str(caught.value)


def test_a_config_that_extends_another_merges_sections_field_by_field(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", {"algo": "dmc", "init_from": None,
                                   "dmc": {"epsilon": 0.2, "scale": 0.5}})
    child = _write(tmp_path, "child.yaml", {"extends": "base.yaml", "dmc": {"scale": 0.25}})
    flat_child = _write(tmp_path, "flat.yaml", {"extends": "base.yaml", "dmc_epsilon": 0.3})
    cfg = load_config(child)
    assert (cfg.value("dmc_epsilon"), cfg.value("dmc_scale")) == (0.2, 0.25)
    cfg = load_config(flat_child)  # a flat name over a nested base: the later file wins
    assert (cfg.value("dmc_epsilon"), cfg.value("dmc_scale")) == (0.3, 0.5)


def test_overrides_may_nest_too_and_win_over_the_file() -> None:
    cfg = load_config(DMC, {"init_from": None, "pool": {"snapshot_keep": 3}, "dmc_scale": 0.5})
    assert cfg.section(POOL).snapshot_keep == 3 and cfg.value("dmc_scale") == 0.5
    assert cfg.section(POOL).opponents == load_config(DMC).section(POOL).opponents


def test_a_run_writes_its_algos_sections_and_reads_them_back(tmp_path: Path) -> None:
    """``to_dict`` (a run's config.yaml, a card's config): the shared fields and the sections
    its algo reads, which load back to the same config; an old flat config.yaml loads too."""
    for path in (DEFAULT_CONFIG, DMC, CONFIGS / "maskable_2p.yaml", CONFIGS / "fast_2p.yaml",
                 CONFIGS / "rllib.yaml", CONFIGS / "rllib_table.yaml"):
        cfg = load_config(path)
        written = cfg.to_dict()
        keys = {s.key for s in algos.get(cfg.algo).sections}
        assert keys <= set(written) and not (set(algos.sections()) - keys) & set(written)
        assert load_config(_write(tmp_path, "config.yaml", written)) == cfg, path


def test_sections_are_copies_never_shared_between_configs() -> None:
    a, b = load_config(DMC), load_config(DMC)
    a.section(POOL).snapshot_keep = 99
    assert b.section(POOL).snapshot_keep == 10 and TrainConfig().section(POOL).snapshot_keep == 10


def test_help_config_lists_the_sections_of_the_algo(capsys: pytest.CaptureFixture[str]) -> None:
    from allfives.cli import main

    assert main(["train", "--help-config", "--config", str(DMC)]) == 0
    out = capsys.readouterr().out
    assert "== section dmc: Deep Monte-Carlo" in out and "dmc.epsilon (--dmc-epsilon): 0.05" in out
    assert "== section search_distill" not in out  # dmc does not read it
    assert "\ngamma: 0.99" in out


def test_a_section_field_has_its_flag_on_the_command_line(tmp_path: Path) -> None:
    import argparse

    from allfives_train.cli import add_arguments, overrides_from

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--dmc-epsilon", "0.3", "--eval-games", "8",
                              "--opponents", "greedy@2"])
    overrides = overrides_from(args)
    cfg = load_config(DMC, {**overrides, "init_from": None})
    assert cfg.value("dmc_epsilon") == 0.3 and cfg.section(EVALUATION).games == 8
    assert cfg.section(POOL).opponents == [{"agent": "greedy", "weight": 2.0}]


# ------------------------------------------------------------ the RLlib backend's section
RLLIB_TABLE = CONFIGS / "rllib_table.yaml"


def test_the_rllib_section_nests_and_its_flat_names_are_its_flags(tmp_path: Path) -> None:
    from allfives_train.rllib.section import RLLIB

    nested = _write(tmp_path, "a.yaml", {"algo": "rllib_ppo", "rllib": {
        "policy": "selfplay", "snapshot_every": 3, "iterations": 7}})
    flat = _write(tmp_path, "b.yaml", {"algo": "rllib_ppo", "rllib_policy": "selfplay",
                                       "rllib_snapshot_every": 3, "iterations": 7})
    a = load_config(nested)
    assert a == load_config(flat) and a.section(RLLIB).policy == "selfplay"
    assert (RLLIB.flat("policy"), RLLIB.flat("iterations")) == ("rllib_policy", "iterations")
    assert a.resolved_run_dir() == Path("runs/rllib_selfplay_all_fives_2p")  # its {policy}
    assert a.section(POOL).opponents == [] and a.value("ent_coef") == 0.01  # its defaults


@pytest.mark.parametrize("old, new, value", [
    ("policy", "rllib.policy", "shared"), ("snapshot_every", "rllib.snapshot_every", 3),
    ("checkpoint_every", "rllib.checkpoint_every", 2), ("bc_teacher", "rllib.bc_teacher", None),
    ("engine", "rllib.engine", "scalar"),
])
def test_an_old_rllib_name_is_read_as_its_new_one_with_a_one_line_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str,
        value: object) -> None:
    """A config or a flag of the RLlib backend's own config before it read TrainConfig: its
    old name is read as the new field, and one line says the new name and flag."""
    base = load_config(RLLIB_TABLE)
    flat = new.replace(".", "_")
    file = _write(tmp_path, "old.yaml", {"extends": str(RLLIB_TABLE), old: value})
    for load in (lambda: load_config(file), lambda: load_config(RLLIB_TABLE, {old: value})):
        cfg = load()
        assert cfg.value(flat) == value and cfg == base.replace(**{flat: value})
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{old} is now {new} (--{flat.replace('_', '-')})" in err[0]
    assert load_config(DMC, {"snapshot_every": 7, "init_from": None}).value(
        "snapshot_every") == 7  # the pool's, with another algo
    assert capsys.readouterr().err == ""


def test_the_old_rllib_flags_still_run_with_a_note(
        capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from allfives_train.cli import _load_train_config, add_arguments, chosen_algo

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--backend", "rllib", "--config", str(RLLIB_TABLE),
                              "--bc-teacher", "null", "--opponents", "heuristic@1",
                              "--num-env-runners", "0", "--iterations", "2"])
    cfg = _load_train_config(args, chosen_algo(args))
    assert not isinstance(cfg, int) and cfg.algo == "rllib_ppo"
    assert (cfg.value("rllib_bc_teacher"), cfg.value("num_env_runners"),
            cfg.value("iterations")) == (None, 0, 2)
    assert cfg.section(POOL).opponents == [{"agent": "heuristic", "weight": 1.0}]
    err = capsys.readouterr().err.strip().splitlines()
    assert any("bc_teacher is now rllib.bc_teacher (--rllib-bc-teacher)" in e for e in err)


def test_an_rllib_run_writes_its_config_by_section(tmp_path: Path) -> None:
    """The card's and the run's config.yaml: the shared fields, then ``rllib``, ``ppo``,
    ``pool`` and ``actor``; an old flat config.yaml (RLlibConfig's) loads to the same."""
    cfg = load_config(CONFIGS / "rllib.yaml")
    written = cfg.to_dict()
    assert list(written)[-4:] == ["rllib", "ppo", "pool", "actor"]
    assert written["rllib"]["engine"] == "batched" and "iterations" not in written
    old = {k: v for k, v in written.items() if not isinstance(v, dict) or k == "rules"}
    for name in ("total_steps", "n_envs", "n_steps", "batch_size", "n_epochs", "device",
                 "precision", "progress", "max_grad_norm", "engine", "checkpoint_every"):
        old.pop(name)  # (RLlibConfig had none of these: engine, checkpoint_every were its own)
    old.update(written["ppo"], **written["rllib"], opponents=written["pool"]["opponents"],
               features=17, feature_temperature=0.25)
    assert load_config(_write(tmp_path, "config.yaml", old)) == cfg


@pytest.mark.parametrize("fields, says", [
    ({"rllib_policy": "league"}, "rllib_policy='league': must be one of shared, per_seat"),
    ({"iterations": 0}, "config iterations=0: must be an integer >= 1"),
    ({"minibatch_size": 900, "train_batch_size": 800}, "must be at most train_batch_size=800"),
    ({"rllib_policy": "selfplay"}, "config opponents="),
    ({"opponents": []}, None),
])
def test_bad_rllib_values_are_one_line(fields: dict, says: str | None) -> None:
    if says is None:
        assert load_config(RLLIB_TABLE, {**fields, "rllib_bc_teacher": None}).algo
        return
    with pytest.raises(ValueError, match=re.escape(says)) as caught:
        load_config(RLLIB_TABLE, fields)
    assert "\n" not in str(caught.value)
