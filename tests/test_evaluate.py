"""The evaluator: its arithmetic on rigged matches, the duplicate format, determinism, output."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from allfives.cli import main
from allfives_agents.base import Agent, Obs, register, register_prefix
from allfives_agents.evaluation import report
from allfives_agents.evaluation.evaluate import Outcome, seatings, tournament
from allfives_agents.evaluation.stats import (
    bradley_terry,
    elo_ratings,
    expected_score,
    wilson,
    win_rate,
)
from allfives_env.game.gameconfig import GameConfig
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import TILE_PIPS
from allfives_env.game.view import SeatView
from allfives_env.records.record import read_records, verify


@register("test_greedy_twin")
class GreedyTwin(Agent):
    """Plays exactly like ``greedy`` under another name."""

    needs_obs = False

    def act(self, obs: Obs, view: SeatView) -> int:
        from allfives_agents.rulebased.bots import GreedyAgent

        return GreedyAgent.act(self, obs, view)  # type: ignore[arg-type]


@register("test_obs_reader")
class ObsReader(Agent):
    """Needs the observation: lightest tile among the actions the mask allows."""

    def act(self, obs: Obs, view: SeatView) -> int:
        legal = [int(a) for a in obs["action_mask"].nonzero()[0]]
        assert legal == list(view.legal)
        return min(legal, key=lambda a: (TILE_PIPS[a // 5], a))


# ---------------------------------------------------------------------- stats
def test_win_rate_counts_draws_half() -> None:
    assert win_rate(6, 2, 10) == 0.7
    with pytest.raises(ValueError):
        win_rate(8, 3, 10)


def test_wilson_known_values() -> None:
    lo, hi = wilson(0.5, 100)
    assert lo == pytest.approx(0.40383, abs=1e-5) and hi == pytest.approx(0.59617, abs=1e-5)
    lo, hi = wilson(0.0, 10)  # all losses: the interval still has width
    assert lo == 0.0 and hi == pytest.approx(0.27753, abs=1e-5)
    assert wilson(0.7, 1000)[0] == pytest.approx(0.67087, abs=1e-5)


def test_bradley_terry_recovers_consistent_odds() -> None:
    # A beats B 3:1, B beats C 3:1, A beats C 9:1: exactly the strengths 9, 3, 1.
    results = {(0, 1): (75.0, 100), (1, 2): (75.0, 100), (0, 2): (90.0, 100)}
    elo = elo_ratings(3, results, prior_draws=0)
    step = 400 * math.log10(3)
    assert elo[0] - elo[1] == pytest.approx(step, abs=1e-6)
    assert elo[1] - elo[2] == pytest.approx(step, abs=1e-6)
    assert sum(elo) / 3 == pytest.approx(1500)
    assert expected_score(elo[0], elo[2]) == pytest.approx(0.9)


def test_bradley_terry_prior_keeps_a_perfect_record_finite() -> None:
    logs = bradley_terry(2, {(0, 1): (10.0, 10)})
    # one virtual draw: 10.5 : 0.5 -> odds 21
    assert logs[0] - logs[1] == pytest.approx(math.log(21), abs=1e-6)


def _outcome(pair: tuple[int, int], winner: int | None, points: tuple[float, float],
             hands: int) -> Outcome:
    return Outcome(pair, 0, 0, winner, points, hands, (0.2, 0.0), (10, 10), (0.05, 0.0))


def test_summary_of_a_rigged_match() -> None:
    rules = make_rules("all_fives")
    outs = ([_outcome((0, 1), 0, (250, 100), 5)] * 6 + [_outcome((0, 1), 1, (100, 250), 5)] * 3
            + [_outcome((0, 1), None, (200, 200), 10)])
    s = report.summarize(rules, ["a", "b"], outs, seed=0)
    (p,) = s["pairings"]
    assert (p["games"], p["wins"], p["losses"], p["draws"]) == (10, 6, 3, 1)
    assert p["win_rate"] == 0.65
    assert p["ci95"] == list(wilson(0.65, 10))
    assert p["hands"] == 55
    assert p["points_per_hand_a"] == pytest.approx((6 * 250 + 3 * 100 + 200) / 55)
    assert p["margin_per_hand"] == pytest.approx((6 * 150 - 3 * 150) / 55)
    elo = {a["id"]: a["elo"] for a in s["agents"]}
    assert elo["a"] - elo["b"] == pytest.approx(400 * math.log10(7 / 4), abs=1e-6)
    a = next(a for a in s["agents"] if a["id"] == "a")
    assert a["ms_per_move"] == pytest.approx(1000 * 0.2 / 10)
    assert a["max_ms_per_move"] == pytest.approx(50)
    assert "Wilson" in report.format_table(s)


# ---------------------------------------------------------------------- format
def test_seatings() -> None:
    assert seatings(make_rules("all_fives")) == [(0, 1), (1, 0)]
    three = seatings(make_rules("all_fives", players=3))
    assert len(three) == 6 and all(0 in s and 1 in s for s in three)
    assert len(seatings(make_rules("all_fives", players=4, teams=False))) == 14
    assert seatings(make_rules("all_fives", players=4)) == [(0, 1, 0, 1), (1, 0, 1, 0)]


@pytest.mark.parametrize("players,teams", [(2, None), (3, None), (4, True)])
def test_duplicate_format_cancels_the_deal(players: int, teams: bool | None) -> None:
    """Two entries that play identically split every deal exactly evenly."""
    rules = GameConfig("five_up", players, teams, overrides={"target": 60}).rules
    outs = list(tournament(rules, ["greedy", "test_greedy_twin"], games=12, seed=3))
    assert len(outs) % len(seatings(rules)) == 0 and len(outs) >= 12
    s = report.summarize(rules, ["greedy", "test_greedy_twin"], outs, 3)
    assert s["pairings"][0]["win_rate"] == 0.5
    assert s["pairings"][0]["margin_per_hand"] == pytest.approx(0.0)


def test_results_do_not_depend_on_workers() -> None:
    rules = make_rules("all_fives", target=100)
    ids = ["random", "greedy", "test_obs_reader"]
    one = list(tournament(rules, ids, games=6, seed=11, workers=1))
    two = list(tournament(rules, ids, games=6, seed=11, workers=2))
    key = [(o.pair, o.deal, o.seating, o.winner, o.points, o.hands) for o in one]
    assert key == [(o.pair, o.deal, o.seating, o.winner, o.points, o.hands) for o in two]
    assert len(one) == 3 * 6
    assert len({o.points for o in one}) > 1


def test_prefix_ids_like_ckpt_are_accepted() -> None:
    """Any id ``make_agent`` accepts can enter, e.g. ``ckpt:<path>`` loaders."""
    register_prefix("testpfx", lambda rest, seed: ObsReader(seed=seed))
    rules = make_rules("all_fives", target=60)
    outs = list(tournament(rules, ["testpfx:anything,x=1", "random"], games=4, seed=2))
    assert len(outs) == 4 and all(o.moves[0] > 0 for o in outs)


# ---------------------------------------------------------------------- CLI
def test_cli_writes_table_json_csv_and_records(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    records = tmp_path / "games.jsonl"
    code = main(["eval", "--agents", "greedy", "random", "--preset", "five_up", "--games", "4",
                 "--workers", "1", "--json", str(out_json), "--csv", str(out_csv),
                 "--records", str(records), "--no-progress", "--set", "target=80"])
    assert code == 0
    table = capsys.readouterr().out
    assert "greedy vs random" in table and "Elo" in table
    data = json.loads(out_json.read_text())
    assert data["pairings"][0]["games"] == 4 and data["rules"]["target"] == 80
    rows = list(csv.DictReader(out_csv.open()))
    assert rows[0]["a"] == "greedy" and int(rows[0]["games"]) == 4
    recs = list(read_records(records))
    assert len(recs) == 4
    for rec in recs:
        verify(rec)
    assert {tuple(r["agents"]) for r in recs} == {("greedy", "random"), ("random", "greedy")}


@pytest.mark.parametrize("argv,message", [
    (["--agents", "greedy"], "at least two"),
    (["--agents", "greedy", "greedy"], "distinct"),
    (["--agents", "greedy", "nosuchbot"], "unknown agent"),
    (["--agents", "greedy", "random", "--games", "0"], "--games"),
    (["--agents", "greedy", "random", "--players", "5"], "players"),
])
def test_cli_bad_input_is_one_clear_line(argv: list[str], message: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", *argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_one_process_evaluates_an_id_at_two_tables(capsys) -> None:
    """Agents are cached per id, seat and table: ``ckpt:best`` at 2 seats, then at 3 seats in
    the same process, plays each table's own model (it once kept the first table's)."""
    from allfives.cli import main

    common = ["--games", "2", "--seed", "1", "--workers", "1", "--no-progress"]
    assert main(["eval", "--agents", "ckpt:best", "greedy", *common]) == 0
    assert main(["eval", "--agents", "ckpt:best", "greedy", "--players", "3", *common]) == 0, \
        capsys.readouterr().err
