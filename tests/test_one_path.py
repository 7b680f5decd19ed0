"""One way through the code: one game config refused the same way from every entry point,
one seeding convention shared by ``simulate`` and ``eval``, caches keyed by the rules' value
(the one seat interface is tested in tests/test_no_peeking.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allfives.cli import main
from allfives_agents.base import make_agent
from allfives_env.game import observation
from allfives_env.game.gameconfig import GameConfig
from allfives_env.game.rules import Rules, RulesError, make_rules

# ---------------------------------------------------------------------- one game config
BAD_RULES = [
    ({"players": 4, "hand_size": 8}, "needs 32 tiles"),
    ({"players": 3, "teams": True}, "teams=true needs players=4"),
    ({"target": 0}, "target=0: target must be an integer >= 1"),
    ({"players": 5}, "players must be 2, 3 or 4"),
    ({"hand_end": "collect"}, "allowed values are subtract_own, winner_collects"),
    ({"max_hands": 0}, "max_hands must be an integer >= 1"),
]


@pytest.mark.parametrize(("options", "message"), BAD_RULES, ids=[m for _, m in BAD_RULES])
def test_rules_refuse_bad_combinations_however_built(options: dict, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        Rules(**options)
    with pytest.raises(RulesError, match=message):
        make_rules("all_fives", **options)
    with pytest.raises(RulesError, match=message):
        GameConfig(overrides=options)


def test_empty_values_are_errors_from_every_entry_point(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(RulesError, match="target has an empty value"):
        make_rules("all_fives", target=None)
    path = tmp_path / "r.yaml"
    path.write_text("preset: all_fives\ntarget:\n")
    with pytest.raises(RulesError, match="target has an empty value"):
        GameConfig(rules_file=str(path))
    for argv in (["simulate", "--games", "1", "--set", "target="],
                 ["eval", "--agents", "random", "greedy", "--set", "target="],
                 ["play", "--set", "target="], ["train", "--set", "target="]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "'target=' has an empty value" in err, argv
    from allfives_train.config import load_config

    with pytest.raises(ValueError, match="target has an empty value"):
        load_config(None, {"rules": {"target": None}})
    import allfives_env

    with pytest.raises(RulesError, match="target has an empty value"):
        allfives_env.env(target=None)


def test_the_same_rule_flags_mean_the_same_thing_everywhere(tmp_path: Path) -> None:
    """--rules FILE and --set OPTION=VALUE set rule options in simulate and in train."""
    path = tmp_path / "r.yaml"
    path.write_text("preset: five_up\nhand_size: 5\n")
    out = tmp_path / "g.jsonl"
    assert main(["simulate", "--games", "1", "--no-progress", "--rules", str(path),
                 "--set", "target=30", "--out", str(out)]) == 0
    rules = json.loads(out.read_text())["rules"]
    import argparse

    from allfives_train.cli import add_arguments, overrides_from
    from allfives_train.config import DEFAULT_CONFIG, load_config
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--rules", str(path), "--set", "target=30"])
    cfg = load_config(DEFAULT_CONFIG, overrides_from(args), args)
    assert cfg.game().rules.to_dict() == rules
    assert (rules["hand_size"], rules["target"], rules["hand_end"]) == (5, 30, "winner_collects")


def test_set_players_means_the_same_in_train(tmp_path: Path) -> None:
    import argparse

    from allfives_train.cli import add_arguments, overrides_from
    from allfives_train.config import DEFAULT_CONFIG, load_config

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--set", "players=3", "--set", "target=90"])
    cfg = load_config(DEFAULT_CONFIG, overrides_from(args), args)
    assert (cfg.players, cfg.game().rules.players, cfg.game().rules.target) == (3, 3, 90)


def test_train_checks_a_config_against_the_game_its_flags_say(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture
                                                              ) -> None:
    """The game flags apply before the config is checked: a 2-seat config given --players 3
    takes a 3-seat init_from, and refuses a 2-seat one naming the seat counts."""
    import argparse

    from allfives_train.cli import add_arguments, overrides_from
    from allfives_train.config import DEFAULT_CONFIG, load_config

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    config = DEFAULT_CONFIG.parent / "distill_2p.yaml"
    args = parser.parse_args(["--config", str(config), "--players", "3",
                              "--init-from", "checkpoints/all_fives_3p"])
    cfg = load_config(args.config, overrides_from(args), args)
    assert (cfg.players, cfg.init_from) == (3, "checkpoints/all_fives_3p")
    run = tmp_path / "run"
    assert main(["train", "--config", str(config), "--players", "3", "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trained for 2 seats; this game has 3" in err, err
    assert not run.exists()


def test_training_configs_validate_their_rules_block() -> None:
    from allfives_train.config import load_config

    with pytest.raises(ValueError, match="set players and teams as their own fields"):
        load_config(None, {"rules": {"players": 3}})
    with pytest.raises(RulesError, match="hand_size=8 with players=4"):
        load_config(None, {"players": 4, "rules": {"hand_size": 8}})


# ---------------------------------------------------------------------- one seeding
def test_simulate_and_eval_write_the_same_record(tmp_path: Path) -> None:
    sim, ev = tmp_path / "sim.jsonl", tmp_path / "eval.jsonl"
    common = ["--seed", "11", "--preset", "five_up", "--set", "target=60"]
    assert main(["simulate", "--games", "2", "--agents", "random", "greedy", "--out", str(sim),
                 "--no-progress", *common]) == 0
    assert main(["eval", "--agents", "random", "greedy", "--games", "4", "--workers", "1",
                 "--records", str(ev), "--no-progress", *common]) == 0
    sim_games = [json.loads(line) for line in sim.read_text().splitlines()]
    eval_games = [json.loads(line) for line in ev.read_text().splitlines()]
    # eval plays deal d once per seating; its first seating is random in seat 0
    assert [g for g in eval_games if g["agents"] == ["random", "greedy"]] == sim_games


# ---------------------------------------------------------------------- caches
def test_observation_caches_are_keyed_by_the_rules_value() -> None:
    import allfives_env

    before = len(observation._TEMPLATES)
    for _ in range(50):
        env = allfives_env.env("muggins", players=3, target=77)
        env.reset(seed=0)
        env.observe(env.agent_selection)
    assert len(observation._TEMPLATES) - before <= 3  # one per seat, not one per env


def test_agent_ids_build_fresh_agents() -> None:
    a, b = make_agent("greedy"), make_agent("greedy")
    assert a is not b and a.name == b.name == "greedy"
