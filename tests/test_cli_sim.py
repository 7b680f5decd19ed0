"""``allfives simulate`` and ``allfives replay`` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from reference_checker import check_record

from allfives.cli import main
from allfives_agents.base import make_agent
from allfives_env.game.match import game_seed, play_game
from allfives_env.game.rules import make_rules
from allfives_env.records.record import game_record, read_records, write_records

ROOT = Path(__file__).resolve().parent.parent


def simulate(tmp_path: Path, *args: str, name: str = "games.jsonl") -> list[dict]:
    out = tmp_path / name
    code = main(["simulate", *args, "--out", str(out), "--no-progress"])
    assert code == 0
    return list(read_records(out))


def test_simulate_writes_replayable_records(tmp_path: Path, capsys: pytest.CaptureFixture
                                            ) -> None:
    recs = simulate(tmp_path, "--preset", "five_up", "--players", "3", "--games", "12",
                    "--seed", "5")
    assert len(recs) == 12
    assert [r["seed"] for r in recs] == [game_seed(5, k) for k in range(12)]
    for r in recs:
        assert r["agents"] == ["random"] * 3
        assert r["rules"] == make_rules("five_up", players=3).to_dict()
        assert check_record(r) == []
    text = capsys.readouterr().out
    assert "12 games of five_up, 3 players" in text
    wins = [int(line.split("wins")[1].split()[0]) for line in text.splitlines() if "wins" in line]
    assert sum(wins) == sum(r["winner"] is not None for r in recs)
    assert f"mean hands per game {sum(len(r['hands']) for r in recs) / 12:.2f}" in text


def test_simulate_is_deterministic(tmp_path: Path) -> None:
    args = ("--preset", "pagat", "--players", "4", "--games", "4", "--seed", "9",
            "--agents", "greedy", "random", "greedy", "random")
    first = simulate(tmp_path, *args, name="a.jsonl")
    assert first == simulate(tmp_path, *args, name="b.jsonl")
    assert first != simulate(tmp_path, *args[:-5], "--seed", "10", name="c.jsonl")


def test_a_record_is_replayed_from_its_seed(tmp_path: Path) -> None:
    recs = simulate(tmp_path, "--preset", "muggins", "--games", "3", "--seed", "2",
                    "--agents", "greedy", "random")
    rules = make_rules("muggins")
    rec = recs[2]
    state = play_game(rules, [make_agent(a, seed=s) for s, a in enumerate(rec["agents"])],
                      rec["seed"])
    assert game_record(state, seed=rec["seed"], agents=rec["agents"]) == rec


def test_teams_flag_and_rule_overrides(tmp_path: Path) -> None:
    recs = simulate(tmp_path, "--players", "4", "--no-teams", "--games", "2",
                    "--set", "target=60", "--set", "win_check=end_of_hand")
    rules = recs[0]["rules"]
    assert (rules["teams"], rules["target"], rules["win_check"]) == (False, 60, "end_of_hand")
    assert len(recs[0]["final_scores"]) == 4
    recs = simulate(tmp_path, "--players", "4", "--games", "1", name="t.jsonl")
    assert recs[0]["rules"]["teams"] is True and len(recs[0]["final_scores"]) == 2


def test_rules_file_then_command_line(tmp_path: Path) -> None:
    path = tmp_path / "house.yaml"
    path.write_text("preset: muggins\nplayers: 3\ntarget: 40\n")
    recs = simulate(tmp_path, "--rules", str(path), "--set", "spinner=false", "--games", "2")
    assert recs[0]["rules"] == make_rules("muggins", players=3, target=40,
                                          spinner=False).to_dict()
    recs = simulate(tmp_path, "--rules", str(ROOT / "configs/rules/pagat.yaml"), "--players",
                    "3", "--games", "1", name="p.jsonl")
    assert recs[0]["rules"] == make_rules("pagat", players=3).to_dict()


@pytest.mark.parametrize(("args", "words"), [
    (["--set", "targt=5"], ("targt", "target")),
    (["--players", "3", "--teams"], ("teams", "players=4")),
    (["--set", "hand_size=20"], ("hand_size", "28")),
    (["--agents", "random", "random", "random"], ("3 ids", "2 seats")),
    (["--agents", "nobody"], ("unknown agent", "random")),
    (["--games", "0"], ("--games",)),
    (["--rules", "/nonexistent/rules.yaml"], ("rules.yaml",)),
])
def test_simulate_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture,
                                    args: list[str], words: tuple[str, ...]) -> None:
    out = tmp_path / "never.jsonl"
    assert main(["simulate", *args, "--games" if "--games" not in args else "--seed", "1",
                 "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("allfives simulate: error:") and len(err.strip().splitlines()) == 1
    for word in words:
        assert word in err
    assert not out.exists()


def test_unknown_preset_is_an_argparse_error(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--preset", "fives"])
    assert info.value.code == 2
    assert "all_fives" in capsys.readouterr().err


def test_replay_shows_a_game(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    recs = simulate(tmp_path, "--preset", "five_up", "--games", "4", "--seed", "3")
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "games.jsonl"), "--game", "3"]) == 0
    text = capsys.readouterr().out
    rec = recs[3]
    assert f"game 3: seed {rec['seed']}" in text
    assert "every play, hand result and score checks out" in text
    assert text.count("\nhand ") == len(rec["hands"])
    plays = sum(ev["type"] == "play" for h in rec["hands"] for ev in h["events"])
    assert text.count(" plays ") == plays
    assert f"final scores: {' '.join(f'{s:>4}' for s in rec['final_scores'])}" in text


def test_replay_verify_only(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    simulate(tmp_path, "--games", "5")
    assert main(["replay", str(tmp_path / "games.jsonl"), "--verify-only"]) == 0
    assert "5 game(s)" in capsys.readouterr().out


def test_replay_reports_a_bad_record(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    recs = simulate(tmp_path, "--preset", "pagat", "--games", "3", "--seed", "4")
    recs[1]["hands"][0]["scores"][0] += 5
    bad = tmp_path / "bad.jsonl"
    write_records(bad, recs)
    capsys.readouterr()
    assert main(["replay", str(bad), "--game", "0"]) == 0
    assert main(["replay", str(bad), "--game", "1"]) == 1
    assert "game 1: does not replay: hand 0: scores" in capsys.readouterr().err
    assert main(["replay", str(bad), "--verify-only"]) == 1


@pytest.mark.slow
@pytest.mark.parametrize(("args", "words"), [
    (["--game", "7"], ("--game 7", "0..1")),
    (["--game", "-1"], ("--game -1",)),
])
def test_replay_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture,
                                  args: list[str], words: tuple[str, ...]) -> None:
    simulate(tmp_path, "--games", "2")
    assert main(["replay", str(tmp_path / "games.jsonl"), *args]) == 2
    err = capsys.readouterr().err
    for word in words:
        assert word in err


def test_replay_of_a_file_that_is_not_json(tmp_path: Path, capsys: pytest.CaptureFixture
                                           ) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    assert main(["replay", str(path)]) == 2
    assert "line 1" in capsys.readouterr().err


def test_console_entry_point_runs(tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "allfives.cli", "simulate", "--games", "3", "--seed", "1",
         "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "3 games of all_fives" in proc.stdout
    assert len(out.read_text().splitlines()) == 3
    assert json.loads(out.read_text().splitlines()[0])["format"] == "allfives-record/1"


CORE = ["allfives_env", "allfives_env.game.engine", "allfives_env.game.rules",
        "allfives_env.records.record",
        "allfives_env.game.view", "allfives_env.game.observation", "allfives_env.game.match",
        "allfives_agents.evaluation.simulate", "allfives_env.records.replay_cli", "allfives.cli",
        "allfives_agents.base", "allfives_agents.rulebased.bots"]


def test_core_imports_without_torch() -> None:
    code = (
        "import sys, importlib\n"
        "class NoTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torch':\n"
        "            raise ImportError('torch is blocked')\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        f"for m in {CORE!r}:\n"
        "    importlib.import_module(m)\n"
        "from allfives.cli import main\n"
        "assert main(['simulate', '--games', '2', '--no-progress']) == 0\n"
        "assert 'torch' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
