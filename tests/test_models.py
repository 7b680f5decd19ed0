"""The model registry (agents/trained/models.py, checkpoints/models.yaml): one shipped model per
setting, found by name, by former name and by the rules in play (``ckpt:best``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allfives.cli import main
from allfives_agents.base import make_agent
from allfives_agents.trained.models import best_for, find_model, shipped_models
from allfives_env.game.match import play_game
from allfives_env.game.rules import make_rules

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = sorted(p.name for p in (ROOT / "checkpoints").iterdir() if p.is_dir())


def test_the_registry_lists_exactly_the_shipped_folders_one_per_setting() -> None:
    models = shipped_models()
    assert sorted(m.name for m in models) == FOLDERS
    settings = [(m.preset, m.players, m.teams) for m in models]
    assert len(set(settings)) == len(settings)
    for m in models:
        card = json.loads((m.directory / "card.json").read_text())
        assert (card["players"], bool(card["teams"]), card["rules"]["preset"]) == \
            (m.players, m.teams, m.preset), m.name


def test_every_strength_figure_says_when_and_how_it_was_measured() -> None:
    for m in shipped_models():
        assert {row["vs"] for row in m.strength} >= {"heuristic", "search", "greedy"}, m.name
        for row in m.strength:
            lo, hi = row["ci95"]
            assert lo <= row["win_rate"] <= hi and row["games"] > 0 and row["date"]
            assert row["command"].startswith(f"allfives eval --agents ckpt:{m.name} ")


@pytest.mark.parametrize("name", ["all_fives_2p", "exit2_all_fives_2p"])
def test_found_by_name_and_former_name(name: str) -> None:
    model = find_model(name)
    assert model is not None and model.name == "all_fives_2p"
    agent = make_agent(f"ckpt:{name}")
    assert agent.directory.resolve() == (ROOT / "checkpoints" / "all_fives_2p").resolve()


def test_an_unknown_name_is_one_line_naming_the_shipped_models() -> None:
    assert find_model("ppo_all_fives_2p") is None  # ancestors are not shipped
    with pytest.raises(ValueError, match="all_fives_2p") as err:
        make_agent("ckpt:ppo_all_fives_2p")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("preset,players,teams,want", [
    ("all_fives", 2, False, "all_fives_2p"),
    ("all_fives", 3, False, "all_fives_3p"),
    ("all_fives", 4, True, "all_fives_4p_teams"),
    ("five_up", 2, False, "five_up_2p"),
    ("muggins", 2, False, "five_up_2p"),  # hand size 7, no subtraction: nearer five_up
    ("pagat", 2, False, "all_fives_2p"),
])
def test_best_is_the_model_for_the_rules(preset: str, players: int, teams: bool,
                                         want: str) -> None:
    rules = make_rules(preset=preset, players=players, teams=teams)
    assert best_for(rules).name == want
    agent = make_agent("ckpt:best", seed=1)
    others = [make_agent("greedy", seed=i) for i in range(1, players)]
    state = play_game(rules, [agent] + others, 3)
    assert state.game_over and agent.directory.name == want


@pytest.mark.parametrize("model", shipped_models(), ids=lambda m: m.name)
def test_every_shipped_model_carries_a_learned_value_that_the_search_plays(model) -> None:
    """Every shipped model's policy.npz carries its critic (docs/strength.md), so the
    search that values its leaves with it plays a whole game at the model's table."""
    assert make_agent(f"ckpt:{model.name}").policy.has_value, model.name
    rules = make_rules(preset=model.preset, players=model.players, teams=model.teams)
    valued = make_agent("search:net=best,value=1,depth=1,sims=8,min_worlds=2", seed=1)
    others = [make_agent("greedy", seed=i) for i in range(1, model.players)]
    state = play_game(rules, [valued] + others, 3)
    assert state.game_over and valued.net.directory.name == model.name


def test_best_refuses_a_table_no_model_plays() -> None:
    with pytest.raises(ValueError, match="no shipped model plays 4 seats"):
        best_for(make_rules(players=4, teams=False))


def test_allfives_models_lists_them(capsys) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for m in shipped_models():
        assert f"ckpt:{m.name}" in out
    assert main(["models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == [m.name for m in shipped_models()]


def test_the_readme_table_lists_exactly_the_shipped_models() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The shipped models", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    named = [line.split("`")[1] for line in rows]
    assert named == [m.name for m in shipped_models()]
    for m, line in zip(shipped_models(), rows):  # the figures are the registry's
        row = m.win_rate("heuristic")
        assert f"{100 * row['win_rate']:.1f}%" in line, m.name
        assert line.rstrip(" |").endswith(f"{m.elo:+.0f}"), m.name  # the registry's Elo


def test_one_elo_per_model_in_the_registry_and_the_levels() -> None:
    """`allfives models`, the README and `play`/the browser's strongest level show one figure:
    the strongest level's Elo where it is the model alone, else the round robin's rating of
    the model (the strongest level is then the search with the model inside)."""
    import yaml

    levels = yaml.safe_load((ROOT / "agents" / "levels.yaml").read_text())
    by_model = {t["model"]: t["round_robin"].get("model_elo", t["elo"]["strongest"])
                for t in levels["tables"] if "model" in t}
    for m in shipped_models():
        assert m.elo == by_model[m.name], m.name


def test_allfives_models_prints_results_not_history(capsys) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "replaced" not in out and "rule written" not in out
