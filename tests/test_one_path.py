"""One way through the code: one game config refused the same way from every entry point,
one seeding convention shared by ``simulate`` and ``eval``, one seat interface that never
hands a player the GameState (training and imitation opponents included), caches keyed by
the rules' value."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.base import Agent, make_agent
from allfives_env import observation
from allfives_env.cli import main
from allfives_env.engine import GameState
from allfives_env.gameconfig import GameConfig
from allfives_env.rules import Rules, RulesError, make_rules
from allfives_env.view import SeatView

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
    from train.config import load_config

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

    from train.cli import add_arguments, overrides_from
    from train.config import DEFAULT_CONFIG, load_config
    from train.configio import game_overrides
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--rules", str(path), "--set", "target=30"])
    cfg = game_overrides(load_config(DEFAULT_CONFIG, overrides_from(args)), args)
    assert cfg.game().rules.to_dict() == rules
    assert (rules["hand_size"], rules["target"], rules["hand_end"]) == (5, 30, "winner_collects")


def test_training_configs_validate_their_rules_block() -> None:
    from train.config import load_config

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


# ---------------------------------------------------------------------- one seat interface
class Spy(Agent):
    """Records everything it is given, and plays the first legal move."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.received: list[Any] = []

    def act(self, obs: Any, view: SeatView) -> int:
        self.received.append((obs, view))
        return view.legal[0]


def _reaches_a_game_state(root: Any, depth: int = 4) -> bool:
    seen, frontier = set(), [root]
    for _ in range(depth):
        nxt = []
        for obj in frontier:
            if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type)):
                continue
            seen.add(id(obj))
            if isinstance(obj, GameState):
                return True
            nxt.extend(gc.get_referents(obj))
        frontier = nxt
    return False


def test_the_checker_would_find_a_game_state() -> None:
    assert _reaches_a_game_state({"x": [GameState(make_rules(), 0)]})


def test_training_opponents_get_only_their_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    from train.single_agent import AllFivesSingleAgentEnv

    spy = Spy()
    env = AllFivesSingleAgentEnv(make_rules(), [{"agent": "greedy"}], seed=0)
    env.pool.fixed["greedy"] = spy
    env.reset(seed=1)
    for _ in range(200):
        legal = np.flatnonzero(env.action_masks())
        _, _, term, trunc, _ = env.step(int(legal[0]))
        if term or trunc:
            env.reset()
    assert len(spy.received) > 50
    for obs, view in spy.received[:60]:
        assert isinstance(view, SeatView) and not _reaches_a_game_state((obs, view))


def test_imitation_teacher_gets_only_its_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    import train.imitation as imitation
    from train.config import TrainConfig

    spy = Spy()
    monkeypatch.setattr(imitation, "make_agent", lambda agent_id, seed=None: spy)
    cfg = TrainConfig(bc_teacher="greedy", opponents=[{"agent": "greedy"}])
    data = imitation.collect(cfg, make_rules(), 40, seed=0)
    assert len(data["actions"]) >= 40 and len(spy.received) >= 40
    for obs, view in spy.received[:40]:
        assert isinstance(view, SeatView) and not _reaches_a_game_state((obs, view))


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
