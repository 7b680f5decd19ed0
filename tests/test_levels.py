"""Levels for people (agents/levels.py, agents/levels.yaml): every level plays at every table,
the ladder is ordered by the head-to-head results it cites, every figure is the one measured
(checked here against the round robins in experiments/strength/ and the model cards, which the
product itself never reads), ``allfives play --level`` and its refusals, and ``/api/meta``."""

from __future__ import annotations

import builtins
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from allfives.cli import main
from allfives_agents.base import make_agent
from allfives_agents.evaluation.stats import elo_ratings, wilson
from allfives_agents.levels import (
    STRONGEST,
    agent_for,
    find,
    help_text,
    level_names,
    levels_for,
    measured_tables,
    playable,
    resolve,
    strongest_available,
)
from allfives_agents.trained.models import best_for, find_model
from allfives_env.game.match import play_game
from allfives_env.game.rules import make_rules
from allfives_env.records.record import read_records, verify

ROOT = Path(__file__).resolve().parents[1]
TABLES = [(2, False), (3, False), (4, True)]
BOTS = {"random", "greedy", "heuristic", "search"}
INSIDE = {"search:net=best,batched=1",  # search with the shipped model inside
          "search:net=best,value=1,depth=1,batched=1"}  # and its learned value
STRONGEST_HERE = playable("search:net=best,batched=1")  # unbatched without numba
WITH_MODEL = {"ckpt:best", *INSIDE, *map(playable, INSIDE)}  # the strongest level's agents


def _rules(table: dict[str, Any]) -> Any:
    return make_rules(table["preset"], players=table["players"], teams=table["teams"])


@pytest.mark.parametrize("players,teams", TABLES)
def test_every_level_builds_and_plays_a_game(players: int, teams: bool) -> None:
    rules = make_rules("all_fives", players=players, teams=teams, target=40)
    levels = levels_for(rules)
    assert [level.name for level in levels] == level_names()
    for k, level in enumerate(levels):
        agent_id = resolve(level.name, rules)
        assert agent_id == level.agent == agent_for(level.id, rules)
        if agent_id in WITH_MODEL:
            assert level.model == best_for(rules).name
        seats = [make_agent(agent_id, seed=k * 10 + s) for s in range(players)]
        state = play_game(rules, seats, seed=k)
        assert state.game_over and state.winner is not None and max(state.scores) >= 40
        assert level.elo is not None and level.description  # measured at these three tables


def test_the_ladder_is_ordered_by_measured_strength() -> None:
    """No level is measurably weaker than the level below it (its interval against it reaches
    above 50%), at every measured table, and each bot level won more than half its games; the
    strongest plays the shipped model, alone or inside search; every other level is a
    registered bot."""
    tables = measured_tables()
    assert {(t["preset"], t["players"], t["teams"]) for t in tables} == {
        ("all_fives", 2, False), ("all_fives", 3, False), ("all_fives", 4, True),
        ("five_up", 2, False)}
    for table in tables:
        levels = levels_for(_rules(table))
        assert {level.agent for level in levels[:-1]} == BOTS
        assert levels[-1].name == STRONGEST and levels[-1].agent in WITH_MODEL
        assert levels[0].step is None
        for lower, level in zip(levels, levels[1:]):
            step = level.step
            assert step is not None, (table["preset"], level.name)
            lo, hi = step["ci95"]
            assert hi > 0.5 and lo <= step["win_rate"] <= hi, (table, level.name)
            assert step["win_rate"] > 0.5 or level.name == STRONGEST, (table, level.name)
            assert level.below == f"{lower.name} ({lower.agent})"
        heuristic = next(level for level in levels if level.agent == "heuristic")
        assert heuristic.elo == 0  # Elo over heuristic
        assert "Elo over heuristic" in levels[1].strength_text()


def _pairings(path: Path) -> dict[tuple[str, str], tuple[float, int]]:
    out: dict[tuple[str, str], tuple[float, int]] = {}
    for p in json.loads(path.read_text())["pairings"]:
        score = p["wins"] + p["draws"] / 2
        out[(p["a"], p["b"])] = (score, p["games"])
        out[(p["b"], p["a"])] = (p["games"] - score, p["games"])
    return out


@pytest.mark.parametrize("k", range(4))
def test_every_figure_is_the_one_measured(k: int) -> None:
    """Elo and each step against the round robin it cites (the lab's file), the shipped
    model's step against its row in checkpoints/models.yaml, and the model's weights against
    the hash the figures were measured for: a replaced model fails here until its table is
    measured again."""
    table = measured_tables()[k]
    rr = table["round_robin"]
    source = ROOT / rr["source"]
    data = json.loads(source.read_text())
    assert (data["seed"], data["preset"]) == (rr["seed"], table["preset"])
    assert (data["rules"]["players"], data["rules"]["teams"]) == (table["players"],
                                                                 table["teams"])
    ladder = {name: rr["model_id"] if agent in WITH_MODEL else agent
              for name, agent in table["ladder"].items()}  # the round robin: the model
    pairs = _pairings(source)
    ids = [ladder[name] for name in level_names()]
    results = {(ids.index(a), ids.index(b)): r for (a, b), r in pairs.items()
               if a in ids and b in ids and ids.index(a) < ids.index(b)}
    assert len(results) == 10  # every pairing of the five, one command reproduces them
    assert ("model_elo" in rr) == (table["ladder"][STRONGEST] in INSIDE)
    elo = elo_ratings(5, results)
    base = elo[ids.index("heuristic")]
    for name, rating in zip(level_names(), elo):
        own = table["ladder"][name] in INSIDE  # search with the model: the model's rating
        assert (rr["model_elo"] if own else table["elo"][name]) == round(rating - base), name
    model = find_model(table["model"])
    assert model is not None and model.name == best_for(_rules(table)).name
    npz = (model.directory / "policy.npz").read_bytes()
    assert hashlib.sha256(npz).hexdigest() == table["sha256"]
    played = rr["model_id"].removeprefix("ckpt:")  # by name, or the same weights by path
    if played not in (model.name, *model.formerly):
        assert Path(played).name in model.formerly, played
        npz = (ROOT / played / "policy.npz").read_bytes()
        assert hashlib.sha256(npz).hexdigest() == table["sha256"], played
    names = level_names()
    for lower, name in zip(names, names[1:]):
        if table["ladder"][name] == "ckpt:best":  # the model's row: fresh seeds, more games
            row = model.win_rate(table["ladder"][lower])
            step = find(name, _rules(table)).step
            assert row is not None and step is not None
            assert {key: step[key] for key in row} == row, name
            continue
        step = table["steps"][name]
        if table["ladder"][name] in INSIDE:  # search with the model: its own games
            _check_own_step(table, name, lower, step)
            continue
        score, games = pairs[(ladder[name], ladder[lower])]
        assert step["games"] == games == rr["games"]
        assert step["win_rate"] == pytest.approx(score / games, abs=5e-4)
        lo, hi = wilson(score / games, games)
        assert step["ci95"] == pytest.approx([lo, hi], abs=1e-3)


def _check_own_step(table: dict[str, Any], name: str, lower: str, step: dict[str, Any]) -> None:
    """A strongest level that is the search with the model inside: its step is its own
    measurement (wins, games, Wilson interval, seeds, command) and its Elo the level below's
    plus that step's."""
    score = (step["wins"] + step["draws"] / 2) / step["games"]
    assert step["win_rate"] == pytest.approx(score, abs=5e-5)  # to 4 decimals
    lo, hi = wilson(score, step["games"])
    assert step["ci95"] == pytest.approx([lo, hi], abs=1e-3)
    assert step["seeds"] and str(step["seeds"][0]) in step["command"]
    assert (ROOT / step["source"]).is_file()
    p = step["win_rate"]
    assert table["elo"][name] == round(table["elo"][lower] + 400 * math.log10(p / (1 - p)))
    below = table["ladder"][lower]
    assert f" {below} " in step["command"] + " " and "search:net=" in step["command"]


def test_a_table_no_model_plays_offers_the_bots_up_to_hard() -> None:
    rules = make_rules("all_fives", players=4, teams=False)
    strongest = find(STRONGEST, rules)
    assert not strongest.available and "no shipped model plays 4 seats" in strongest.unavailable
    assert strongest_available(rules).name == "hard"
    with pytest.raises(ValueError) as err:
        resolve(STRONGEST, rules)
    line = str(err.value)
    assert "\n" not in line and "unavailable" in line and "hard (search)" in line
    assert all(level.elo is None for level in levels_for(rules))
    assert find("hard", rules).strength_text() == "strength not measured at this table"


def test_unknown_levels_and_options_are_one_line_refusals() -> None:
    rules = make_rules("all_fives")
    for bad, words in (("level:nope", "unknown level 'nope'"),
                       ("level:hard,sims=9", "takes no options"), ("level:", "unknown level")):
        with pytest.raises(ValueError) as err:
            agent_for(bad, rules)
        assert words in str(err.value) and "beginner, easy, medium, hard, strongest" in str(
            err.value) and "\n" not in str(err.value)
    assert agent_for("search:sims=20", rules) == "search:sims=20"  # other ids pass unchanged
    assert agent_for("level: easy", rules) == "greedy"


def test_rules_that_differ_from_the_preset_say_where_it_was_measured() -> None:
    level = find("hard", make_rules("all_fives", target=100))
    assert "all_fives, 2 seats under the preset's own rules, not these" in level.strength_text()
    assert level.strength_text().startswith("+69 Elo over heuristic")


# ------------------------------------------------------------------ allfives play --level
def _answer(monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    monkeypatch.setattr(builtins, "input", lambda prompt="": answer)


def test_play_a_level_to_the_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    _answer(monkeypatch, "1")
    out = tmp_path / "g.jsonl"
    assert main(["play", "--level", "medium", "--players", "4", "--teams", "--seed", "3",
                 "--set", "target=40", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Opponents: level medium, search" in text  # medium is search at 4 seats in teams
    assert "-17 Elo over heuristic" in text and "Game over" in text
    (record,) = list(read_records(out))
    verify(record)
    assert record["agents"] == ["human", "search", "search", "search"]


@pytest.mark.parametrize("argv,words", [
    (["--level", "nope"], "unknown level 'nope': levels are beginner, easy, medium, hard, "
                          "strongest"),
    (["--level", "easy", "--opponents", "random"], "--level and --opponents do not go together"),
    (["--level", "strongest", "--players", "4", "--no-teams"], "the strongest level here is "
                                                               "hard (search)"),
    (["--level", "level:hard"], "unknown level 'level:hard'"),
])
def test_play_refuses_a_bad_level_in_one_line(argv: list[str], words: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never.jsonl"
    assert main(["play", *argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert words in captured.err and len(captured.err.strip().splitlines()) == 1
    assert captured.out == "" and not out.exists()


def test_play_defaults_to_the_strongest_level_that_can_play(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _answer(monkeypatch, "quit")
    assert main(["play", "--players", "4", "--no-teams", "--seed", "1",
                 "--out", str(tmp_path / "g.jsonl")]) == 0
    text = capsys.readouterr().out
    assert "No level strongest at this table" in text
    assert "Opponents: level hard, search" in text and "seat 1: search" in text


def test_level_ids_among_the_opponents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    _answer(monkeypatch, "quit")
    assert main(["play", "--opponents", "level:easy", "level:hard", "--players", "3",
                 "--seed", "2", "--out", str(tmp_path / "g.jsonl")]) == 0
    assert "seat 0: human, seat 1: greedy, seat 2: search." in capsys.readouterr().out


def test_play_help_lists_the_levels(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    text = capsys.readouterr().out
    assert help_text() in text and "--level NAME" in text
    table = text.split("levels (--level NAME")[1]
    for name in level_names():
        assert f"\n  {name} " in table
    assert "\n  hard      search +69         search +43         heuristic +0       search +59\n" \
        in table  # at 4 seats in teams hard is heuristic
    assert "\n  strongest search+model +177  search+model +128 " in table
    assert "search+model (search:net=best,batched=1): search with the shipped model" in table
    assert "The default is strongest (the shipped model, alone or inside search)" in table
    assert max(len(line) for line in help_text().splitlines()) <= 100


# ------------------------------------------------------------------ the browser's list
def test_meta_lists_the_levels_and_the_server_plays_them(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the 'web' extra is not installed")
    from fastapi.testclient import TestClient

    from allfives_agents.web.server import create_app

    client = TestClient(create_app(tmp_path / "games", None))
    meta = client.get("/api/meta").json()["levels"]
    assert meta["names"] == level_names() and meta["strongest"] == STRONGEST
    tables = {(t["preset"], t["players"], t["teams"]): t["levels"] for t in meta["tables"]}
    two = tables[("all_fives", 2, False)]
    assert [(lv["name"], lv["id"], lv["agent"]) for lv in two] == [
        (lv.name, lv.id, lv.agent) for lv in levels_for(make_rules("all_fives"))]
    assert two[-1]["model"] == "all_fives_2p" and two[-1]["strength"]["elo_over_heuristic"] == 177
    assert two[-1]["agent"] == STRONGEST_HERE
    assert all(lv["description"] and lv["strength_text"] for lv in two)
    four = tables[("all_fives", 4, False)]
    assert not four[-1]["available"] and four[-2]["available"] and four[-1]["strength"] is None
    assert tables[("all_fives", 4, True)][2]["agent"] == "search"
    body = {"agents": ["human", "level:hard"], "overrides": ["target=40"], "seed": 2}
    view = client.post("/api/games", json=body).json()
    assert view["agents"] == ["human", "search"]
    r = client.post("/api/games", json={"agents": ["human"] + ["level:strongest"] * 3,
                                        "players": 4, "teams": False})
    assert r.status_code == 400 and "the strongest level here is hard" in r.json()["error"]
    r = client.post("/api/games", json={"agents": ["human", "level:../x"]})
    assert r.status_code == 400 and "unknown level" in r.json()["error"]
    r = client.post("/api/games", json={"agents": ["human", "search:net=best,sims=16"]})
    assert r.status_code == 200  # net=best: the server's own model for the table
    r = client.post("/api/games", json={"agents": ["human"] + ["search:net=best"] * 3,
                                        "players": 4, "teams": False})
    assert r.status_code == 400 and "no shipped model plays 4 seats" in r.json()["error"]


def test_naming_model_puts_the_shipped_models_name_for_best() -> None:
    from allfives_agents.levels import naming_model

    five = make_rules("five_up")
    assert naming_model("ckpt:best", five) == "ckpt:five_up_2p"
    assert naming_model("ckpt:best,sample=1", five) == "ckpt:five_up_2p,sample=1"
    assert naming_model("search:net=best,batched=1", five) == "search:net=five_up_2p,batched=1"
    assert naming_model("search:sims=8,net=best", make_rules("all_fives", players=3)) == \
        "search:sims=8,net=all_fives_3p"
    assert naming_model("search:sims=8", five) == "search:sims=8"
    with pytest.raises(ValueError, match="no shipped model plays 4 seats"):
        naming_model("search:net=best", make_rules("all_fives", players=4, teams=False))


def test_without_numba_the_strongest_level_is_the_same_search_unbatched(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``batched=1`` needs numba (an extra): without it the level plays the same search
    unbatched instead of failing at its first move."""
    from allfives_agents import levels

    assert playable("search:net=best,batched=1") == (
        "search:net=best,batched=1" if levels._has_numba() else "search:net=best")
    monkeypatch.setattr(levels, "_has_numba", lambda: False)
    rules = make_rules("all_fives", target=30)
    assert resolve(STRONGEST, rules) == "search:net=best"
    assert playable("search:sims=8,batched=1,depth=1") == "search:sims=8,depth=1"
    assert playable("greedy") == "greedy"
    seats = [make_agent(resolve(STRONGEST, rules), seed=1), make_agent("greedy", seed=2)]
    state = play_game(rules, seats, seed=3)
    assert state.game_over and seats[0].net.directory.name == "all_fives_2p"
    assert not seats[0].batched
