"""The RLlib backend's pieces that need no Ray: its config, the agent -> module mappings, and
the rllib: agent's refusals before anything is loaded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from allfives_agents.base import make_agent
from allfives_agents.trained.rllib_agent import CARD_FORMAT, CARD_NAME, read_card, resolve
from allfives_env.game.gameconfig import GameConfig
from allfives_env.game.observation import OBS_LAYOUT_ID, OBS_SIZE
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.config import DEFAULT_CONFIG as MAIN_JOB
from allfives_train.config import load_config
from allfives_train.rllib import mapping
from allfives_train.rllib.section import RLLIB, env_config

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = MAIN_JOB.parent / "rllib.yaml"  # what --algo rllib_ppo alone runs
TABLE_CONFIG = MAIN_JOB.parent / "rllib_table.yaml"


def test_shipped_rllib_configs_load() -> None:
    cfg = load_config(DEFAULT_CONFIG)  # what --backend rllib runs: this project's method
    own = cfg.section(RLLIB)
    assert (own.engine, own.policy, cfg.players, own.bc_teacher) == ("batched", "shared", 2, None)
    table = load_config(TABLE_CONFIG)
    assert (table.section(RLLIB).engine, table.section(RLLIB).policy, table.players) == (
        "scalar", "shared", 2)
    four = load_config(ROOT / "configs" / "train" / "rllib_selfplay_4p.yaml")
    assert (four.section(RLLIB).policy, four.players, four.teams) == ("selfplay", 4, True)
    assert env_config(four)["teams"] is True


@pytest.mark.parametrize("overrides,message", [
    ({"rllib_policy": "league"}, "policy='league': must be one of shared, per_seat, per_side"),
    ({"players": 5}, "players=5: players must be 2, 3 or 4"),
    ({"iterations": 0}, "iterations=0: must be an integer >= 1"),
    ({"minibatch_size": 900, "train_batch_size": 800}, "must be at most train_batch_size=800"),
    ({"rules": {"players": 3}}, "set players and teams as their own fields"),
    ({"rules": {"target": "high"}}, "target"),
    ({"total_step": 5}, "unknown config field(s) total_step (did you mean total_steps"),
    ({"net_arch": [64, 0]}, "net_arch"),
    ({"gamma": "x"}, "gamma='x': expected"),
])
def test_bad_rllib_config_values_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError) as info:
        load_config(TABLE_CONFIG, overrides)
    assert message in str(info.value)


class FakeEpisode:
    def __init__(self, k: int) -> None:
        self.id_ = f"episode-{k}"


@pytest.mark.parametrize("players,teams", [(2, False), (3, False), (4, True), (4, False)])
def test_selfplay_puts_main_on_one_side_and_one_snapshot_on_the_others(players: int,
                                                                       teams: bool) -> None:
    rules = GameConfig(players=players, teams=teams).rules
    snaps = ["snap_3", "snap_4", "snap_5"]
    fn = mapping.make_mapping("selfplay", rules, snaps)
    main_sides, used = set(), set()
    for k in range(200):
        ep = FakeEpisode(k)
        got = [fn(f"player_{s}", ep) for s in range(players)]
        assert got == [fn(f"player_{s}", ep) for s in range(players)]  # stable per episode
        main_seats = [s for s in range(players) if got[s] == mapping.MAIN]
        sides = {rules.side_of(s) for s in main_seats}
        assert len(sides) == 1
        assert main_seats == [s for s in range(players) if rules.side_of(s) in sides]
        others = {got[s] for s in range(players) if s not in main_seats}
        assert len(others) == 1 and others <= set(snaps)
        main_sides |= sides
        used |= others
    assert main_sides == set(range(rules.n_sides)) and used == set(snaps)


def test_shared_per_seat_and_per_side_mappings() -> None:
    teams = make_rules(players=4, teams=True)
    assert mapping.make_mapping("shared", teams)("player_3", None) == "main"
    per_side = mapping.make_mapping("per_side", teams)
    assert [per_side(f"player_{s}", None) for s in range(4)] == ["side_0", "side_1"] * 2
    per_seat = mapping.make_mapping("per_seat", make_rules(players=3))
    assert [per_seat(f"player_{s}", None) for s in range(3)] == ["seat_0", "seat_1", "seat_2"]
    assert mapping.trained_modules("per_side", teams) == ["side_0", "side_1"]
    with pytest.raises(ValueError, match="at least one snapshot"):
        mapping.make_mapping("selfplay", teams, [])


def write_card(directory: Path, **changes: object) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    card = {"format": CARD_FORMAT, "obs_layout": OBS_LAYOUT_ID, "obs_size": OBS_SIZE,
            "n_actions": N_ACTIONS, "players": 2, "teams": False, "policy": "shared",
            "seat_modules": ["main", "main"]}
    card.update(changes)
    (directory / CARD_NAME).write_text(json.dumps(card))
    return directory


def test_rllib_agent_refuses_another_observation_layout(tmp_path: Path) -> None:
    d = write_card(tmp_path / "old", obs_layout="allfives-obs/0")
    with pytest.raises(ValueError, match="observation layout 'allfives-obs/0', but this "
                                         "program uses 'allfives-obs/1'"):
        make_agent(f"rllib:{d}")
    d2 = write_card(tmp_path / "acts", n_actions=57)
    with pytest.raises(ValueError, match="action space size 57"):
        read_card(d2)


def test_rllib_agent_finds_a_run_directory_and_names_what_is_missing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_card(run / "final")
    assert resolve(str(run)) == run / "final"
    with pytest.raises(ValueError, match="has no module 'main': it has none"):
        make_agent(f"rllib:{run}")
    with pytest.raises(ValueError, match="not found: no allfives_rllib.json"):
        make_agent(f"rllib:{tmp_path / 'nowhere'}")
    with pytest.raises(ValueError, match="option\\(s\\) depth unknown: options are module, "
                                         "sample"):
        make_agent(f"rllib:{run},depth=2")
    bad = tmp_path / "bad"
    shutil.copytree(run / "final", bad)
    (bad / CARD_NAME).write_text("{not json")
    with pytest.raises(ValueError, match="unreadable allfives_rllib.json"):
        make_agent(f"rllib:{bad}")


def test_without_the_rllib_extra_the_trainer_and_agent_say_what_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from allfives.cli import main as allfives

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(ValueError, match=r"ray is not installed: pip install -c "
                                         r"constraints.txt -e '.\[rllib\]'"):
        from allfives_agents.trained.rllib_agent import need_ray

        need_ray("--backend rllib")
    assert allfives(["train", "--backend", "rllib", "--iterations", "1",
                     "--run-dir", str(tmp_path / "run")]) == 2
    run = tmp_path / "ckpt"
    write_card(run)
    (run / "learner_group" / "learner" / "rl_module" / "main").mkdir(parents=True)
    from allfives_env.inputs.trust import trusting

    with trusting(), pytest.raises(ValueError, match="rllib: agents needs Ray RLlib and torch"):
        make_agent(f"rllib:{run}")  # trusted (untrusted, the trust refusal comes first)


def crafted_checkpoint(directory: Path, marker: Path, iteration: int = 2) -> Path:
    """An RLlib-looking algorithm checkpoint whose state file, when unpickled, creates
    ``marker`` (a harmless payload)."""
    import pickle

    class Payload:
        def __reduce__(self):  # noqa: ANN204
            return (Path.touch, (marker,))

    write_card(directory, iteration=iteration, env_steps=512)
    (directory / "rllib_checkpoint.json").write_text("{}")
    (directory / "learner_group").mkdir()
    for name in ("algorithm_state.pkl", "class_and_ctor_args.pkl"):
        (directory / name).write_bytes(pickle.dumps(Payload()))
    return directory


def test_rllib_resume_refuses_a_checkpoint_linked_from_outside_its_run(tmp_path: Path,
                                                                       capsys) -> None:
    """``--resume`` unpickles only the run's own checkpoints: one that links out of the run
    directory is set aside with a warning, nothing of it is read, and with nothing readable
    left the resume is refused in one line (no Ray started; the module imports Ray)."""
    pytest.importorskip("ray", reason="the rllib extra is not installed")
    from allfives_train.rllib.run import train

    marker = tmp_path / "marker"
    elsewhere = crafted_checkpoint(tmp_path / "elsewhere", marker)
    run = tmp_path / "run"
    run.mkdir()
    (run / "checkpoint_000002").symlink_to(elsewhere, target_is_directory=True)
    cfg = load_config(TABLE_CONFIG, {"run_dir": str(run), "rllib_bc_teacher": None})
    with pytest.raises(ValueError, match="no readable checkpoint left in"):
        train(cfg, quiet=True, resume=True)
    assert "links out of the run directory" in capsys.readouterr().err
    assert (run / "unreadable_checkpoint_000002").is_symlink()
    assert not marker.exists()
    with pytest.raises(ValueError, match="no RLlib run to resume in"):
        train(load_config(TABLE_CONFIG, {"run_dir": str(tmp_path / "empty")}), resume=True)
    assert not (tmp_path / "empty").exists()


def test_a_stop_during_ppo_waits_for_the_iteration_and_a_second_one_does_not(capsys) -> None:
    """The RLlib driver's SIGINT/SIGTERM handling: within the PPO loop the first signal is
    noted and said (the iteration finishes, then the run saves); a second one, or one outside
    the loop, stops at once; the previous handlers are back afterwards."""
    import os
    import signal

    from allfives_train.rllib.run import Stopper

    before = signal.getsignal(signal.SIGTERM)
    with Stopper() as stop:
        with stop.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            assert stop.signum == signal.SIGTERM  # noted, nothing raised
            with pytest.raises(KeyboardInterrupt):  # (SIGTERM: SIGINT may be ignored here)
                os.kill(os.getpid(), signal.SIGTERM)
        assert "stopping after this iteration" in capsys.readouterr().err
    with Stopper() as stop, pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)  # outside the loop: at once
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_stop_message_says_what_plays_and_how_to_continue(tmp_path: Path) -> None:
    from allfives_train.rllib.run import Interrupted, interrupted_message

    run = tmp_path / "run"
    write_card(run / "checkpoint_000020", iteration=20)
    write_card(run / "final", iteration=20)
    saved = interrupted_message(Interrupted(run, run / "checkpoint_000020", 20, 2))
    assert saved == (f"allfives train: interrupted at iteration 20; checkpoint saved to "
                     f"{run}/checkpoint_000020 (plays as rllib:{run}). Continue with: "
                     f"allfives train --algo rllib_ppo --run-dir {run} --resume")
    write_card(run / "checkpoint_000030", iteration=30)  # final/ is older than the newest
    at_once = interrupted_message(Interrupted(run, run / "checkpoint_000030", 33, 15, 30, True),
                                  address="auto")
    assert at_once.startswith("allfives train: stopped at once at iteration 33; the newest "
                              f"checkpoint is {run}/checkpoint_000030 (iteration 30, plays as "
                              f"rllib:{run}/checkpoint_000030)")
    assert at_once.endswith(f"--run-dir {run} --address auto --resume")
    nothing = interrupted_message(Interrupted(run, None, 0, 2, at_once=True))
    assert "nothing was saved yet. Start it again (from the beginning)" in nothing


def test_python_m_train_rllib_takes_the_trust_flag_and_says_errors_in_one_line(
        tmp_path: Path, capsys) -> None:
    from allfives_train.rllib.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--trust-checkpoint" in capsys.readouterr().out
    assert main(["--config", str(tmp_path / "missing.yaml"), "--trust-checkpoint"]) == 2
    out = capsys.readouterr()
    lines = [x for x in out.err.splitlines() if x.strip()]
    assert out.out == "" and len(lines) == 1 and "missing.yaml: no such file" in lines[0]


def test_a_finished_rllib_run_is_said_finished_and_nothing_is_rewritten(tmp_path: Path,
                                                                         capsys) -> None:
    """``--resume`` of an RLlib run whose ``final/`` is at ``iterations`` says it is finished
    and how to train longer and touches nothing; a fresh run into it is refused in one line
    with the same words (no Ray started)."""
    pytest.importorskip("ray", reason="the rllib extra is not installed")
    from allfives_train.rllib.run import train

    run = tmp_path / "run"
    final = run / "final"
    (final / "learner_group").mkdir(parents=True)
    (final / "rllib_checkpoint.json").write_text("{}")
    cfg = load_config(TABLE_CONFIG, {"run_dir": str(run), "rllib_bc_teacher": None})
    card = {"format": CARD_FORMAT, "iteration": cfg.value("iterations"), "env_steps": 1000}
    (final / CARD_NAME).write_text(json.dumps(card))
    before = {p: (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
              for p in run.rglob("*")}
    assert train(cfg, quiet=True, resume=True) == final
    assert "holds a finished run" in capsys.readouterr().err
    with pytest.raises(ValueError, match="holds a finished run.*--iterations N"):
        train(cfg, quiet=True)
    after = {p: (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
             for p in run.rglob("*")}
    assert after == before
