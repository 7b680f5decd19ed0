"""What a newcomer writing a first config meets (issue 50): ``extends:`` finds the shipped
configs by name, unset fields never fail on defaults meant for another algo, a typo'd field
gets a "did you mean", and every command the shipped configs' comments suggest works."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from allfives_env.inputs.shipped import shipped_dir
from allfives_train.config import ALGOS, DEFAULT_CONFIG, load_config
from allfives_train.configio import extends_path

CONFIGS = shipped_dir("configs")
ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ extends: by name
def test_a_bare_extends_name_finds_the_shipped_config(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yaml"
    mine.write_text("extends: default.yaml\ntotal_steps: 1000\n")
    got, shipped = load_config(mine), load_config(DEFAULT_CONFIG)
    assert got.total_steps == 1000 and shipped.total_steps != 1000
    assert {**got.to_dict(), "total_steps": shipped.total_steps} == shipped.to_dict()
    other = tmp_path / "res.yaml"
    other.write_text("extends: residual_2p.yaml\nseed: 7\n")
    # residual_2p.yaml's, not the default
    assert load_config(other).value("policy") == "action_features"


def test_a_bare_extends_name_looks_in_recipes_too(tmp_path: Path) -> None:
    assert extends_path(tmp_path, "all_fives_2p.yaml") == \
        (CONFIGS / "recipes" / "all_fives_2p.yaml").resolve()
    assert extends_path(tmp_path, "default.yaml") == DEFAULT_CONFIG.resolve()


def test_a_file_beside_the_config_wins_over_a_shipped_one(tmp_path: Path) -> None:
    (tmp_path / "default.yaml").write_text("algo: ppo_batched\ntotal_steps: 777\n")
    mine = tmp_path / "mine.yaml"
    mine.write_text("extends: default.yaml\nseed: 3\n")
    cfg = load_config(mine)
    # not the shipped one's
    assert (cfg.total_steps, cfg.seed, cfg.value("policy")) == (777, 3, "mlp")


def test_extends_finds_the_shipped_configs_where_shipped_dir_says(tmp_path: Path,
                                                                  monkeypatch) -> None:
    """Installed from a wheel, shipped_dir("configs") is site-packages' copy: it is asked."""
    import allfives_env.inputs.shipped

    installed = tmp_path / "site" / "configs"
    (installed / "train").mkdir(parents=True)
    (installed / "train" / "base.yaml").write_text("total_steps: 4242\n")
    monkeypatch.setattr(allfives_env.inputs.shipped, "shipped_dir", lambda name: installed)
    (tmp_path / "user").mkdir()
    mine = tmp_path / "user" / "mine.yaml"
    mine.write_text("extends: base.yaml\n")
    assert load_config(mine).total_steps == 4242


def test_an_extends_found_nowhere_names_both_places(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yaml"
    mine.write_text("extends: no_such_config.yaml\n")
    with pytest.raises(ValueError, match="no such file beside it") as err:
        load_config(mine)
    text = str(err.value)
    assert "\n" not in text and str(tmp_path) in text and str(CONFIGS / "train") in text


def test_a_recipe_stage_extends_a_shipped_config_by_name(tmp_path: Path) -> None:
    from allfives_train.recipe import check_stage, load_recipe

    path = tmp_path / "mine.yaml"
    path.write_text("stages:\n- {name: ppo, extends: residual_2p.yaml, total_steps: 5000}\n")
    recipe = load_recipe(path)
    assert recipe.stages[0].fields["total_steps"] == 5000
    assert recipe.stages[0].fields["policy"] == "action_features"
    check_stage(recipe, 0, {})


# ------------------------------------------------------------------ unset fields
@pytest.mark.parametrize("algo", ALGOS)
def test_a_from_scratch_config_of_each_algo_loads(tmp_path: Path, algo: str) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(f"algo: {algo}\n")
    cfg = load_config(path)
    assert cfg.algo == algo
    assert cfg.value("bc_teacher") == ("heuristic" if algo == "maskable_ppo" else None)
    if algo in ("search_distill", "dmc"):
        assert cfg.value("policy") == "action_features"


@pytest.mark.parametrize("fields,message", [
    ({"algo": "ppo_batched", "bc_teacher": "heuristic"}, "bc_teacher='heuristic'"),
    ({"algo": "search_distill", "policy": "mlp"}, "policy='mlp'"),
    ({"eval_opponents": ["heuristic"], "best_metric": "greedy"}, "best_metric='greedy'"),
])
def test_a_field_the_user_set_is_still_checked(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        load_config(None, fields)


def test_best_metric_follows_eval_opponents_when_unset() -> None:
    def best(opponents: list[str]) -> str:
        return str(load_config(None, {"eval_opponents": opponents}).value("best_metric"))

    assert best(["heuristic", "random"]) == "heuristic"
    assert best(["random", "greedy"]) == "greedy"


# ------------------------------------------------------------------ did you mean
def test_a_typo_names_the_closest_fields_on_one_line(tmp_path: Path, capsys) -> None:
    from allfives.cli import main

    path = tmp_path / "mine.yaml"
    path.write_text("algo: ppo_batched\ngama: 0.99\n")
    assert main(["train", "--config", str(path), "--help-config"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "gama (did you mean gamma?)" in err, err
    assert "vf_coef" not in err and len(err) < 200, err  # not the list of every field


def test_each_typo_gets_at_most_three_names() -> None:
    with pytest.raises(ValueError) as err:
        load_config(None, {"totl_steps": 1, "zzzz": 2})
    text = str(err.value)
    hint = text.split("totl_steps (did you mean ")[1].split("?")[0]
    assert "total_steps" in hint and 1 <= len(hint.split(" or ")) <= 3
    assert "zzzz (no field is close)" in text


def test_a_set_of_a_config_field_names_its_flag() -> None:
    args = argparse.Namespace(overrides=["gamma=0.99"])
    with pytest.raises(ValueError, match="gamma is a config field, not a rule option: use "
                                         "--gamma 0.99"):
        load_config(DEFAULT_CONFIG, None, args)
    args = argparse.Namespace(overrides=["target=100", "players=3"])
    cfg = load_config(DEFAULT_CONFIG, None, args)
    assert cfg.rules == {"target": 100} and cfg.players == 3


# ------------------------------------------------------------------ the configs' comments
def _commented_commands() -> list[tuple[Path, str]]:
    out = []
    for path in sorted(CONFIGS.rglob("*.yaml")):
        for line in path.read_text().splitlines():
            comment = line.partition("#")[2]
            for match in re.finditer(r"`?(allfives [a-z]+[^`#()]*)", comment):
                out.append((path, match.group(1).strip()))
    return out


def test_the_configs_suggest_commands_and_rule_options_only_with_set() -> None:
    """The two lists below are not empty (so the tests over them test something)."""
    assert len(_commented_commands()) >= 15
    assert {item for _, item in _set_items()} >= {"target=100", "hand_size=9"}


def _set_items() -> list[tuple[Path, str]]:
    return [(path, m.group(1)) for path in sorted(CONFIGS.rglob("*.yaml"))
            for m in re.finditer(r"--set[ =]([a-z_]+=[^\s,;)`]+)", path.read_text())]


@pytest.mark.parametrize("path,command", _commented_commands(),
                         ids=lambda v: v.name if isinstance(v, Path) else None)
def test_every_command_in_the_configs_comments_parses_and_loads(
        path: Path, command: str, monkeypatch) -> None:
    """Each ``allfives ...`` a config's comment suggests parses, and its config loads with its
    flags (nothing is trained)."""
    from allfives.cli import build_parser

    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)[1:]
    args = build_parser(argv).parse_args(argv)
    if args.command == "simulate":
        from allfives_env.game.gameconfig import rules_from_args

        rules_from_args(args)
    elif args.command == "train":
        _load_train(args)


def _load_train(args: argparse.Namespace) -> None:
    from allfives_train import recipe
    from allfives_train.cli import _load_train_config, chosen_algo, overrides_from

    if recipe.is_recipe(args.config):
        loaded = recipe.load_recipe(args.config)
        for k in range(len(loaded.stages)):
            recipe.check_stage(loaded, k, overrides_from(args), args)
    else:  # --algo rllib_ppo alone: its shipped config, as the command loads it
        _load_train_config(args, chosen_algo(args))


@pytest.mark.parametrize("path,item", _set_items(),
                         ids=lambda v: v.name if isinstance(v, Path) else None)
def test_every_set_in_the_configs_is_a_rule_option(path: Path, item: str) -> None:
    from allfives_env.game.gameconfig import GameConfig
    from allfives_env.game.rules import parse_overrides

    options = parse_overrides([item])  # RulesError (a ValueError) on a config field
    rules_file = str(path) if path.parent.name == "rules" else None
    rules = GameConfig(None if rules_file else "all_fives", 2, None, rules_file, options).rules
    assert all(getattr(rules, key) == value for key, value in options.items())
