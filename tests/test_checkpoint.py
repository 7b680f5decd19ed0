"""``ckpt:`` agents: loading, refusing the wrong layout/table, numpy == torch, atomic writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from allfives_agents.base import make_agent
from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.engine import GameState
from allfives_env.game.match import decide, play_game, seat_input
from allfives_env.game.observation import OBS_LAYOUT_ID, OBS_SIZE, observe
from allfives_env.game.rules import make_rules
from allfives_train.games.opponents import OpponentPool
from allfives_train.shell.checkpoints import make_card, save_checkpoint, write_atomic_dir

ROOT = Path(__file__).resolve().parents[1]


def random_policy(seed: int = 0, hidden: int = 16) -> NumpyPolicy:
    rng = np.random.default_rng(seed)
    return NumpyPolicy([
        (rng.normal(size=(OBS_SIZE, hidden)).astype(np.float32), rng.normal(size=hidden)),
        (rng.normal(size=(hidden, 140)).astype(np.float32), rng.normal(size=140)),
    ], "relu")


def write_checkpoint(path: Path, players: int = 2, **card_changes: object) -> Path:
    rules = make_rules(players=players)
    card = make_card(rules, random_policy(), 123, 1.0, {"note": "test"}, [])
    card.update(card_changes)
    save_checkpoint(path, card, random_policy())
    return path


def play(rules_players: int, agent_ids: list[str], seed: int = 0) -> GameState:
    rules = make_rules(players=rules_players)
    return play_game(rules, [make_agent(a, seed=i) for i, a in enumerate(agent_ids)], seed)


def test_a_checkpoint_plays_legal_games(tmp_path: Path) -> None:
    ckpt = write_checkpoint(tmp_path / "c2")
    state = play(2, [f"ckpt:{ckpt}", "greedy"])  # GameState.play raises on an illegal move
    assert state.game_over
    agent = make_agent(f"ckpt:{ckpt / 'card.json'}")  # a file inside the directory works too
    assert agent.card["steps"] == 123


def test_argmax_is_the_best_legal_logit(tmp_path: Path) -> None:
    agent = make_agent(f"ckpt:{write_checkpoint(tmp_path / 'c')}")
    state = GameState(make_rules(players=2), 3)
    legal = state.legal_actions()
    x = observe(state, state.current, legal)
    logits = agent.policy.logits(x)
    chosen = agent.act(*seat_input(state, state.current))
    assert chosen == max(legal, key=lambda a: logits[a])


def test_sampling_option_and_bad_options(tmp_path: Path) -> None:
    ckpt = write_checkpoint(tmp_path / "c")
    assert make_agent(f"ckpt:{ckpt},sample=true,temperature=0.5").sample
    with pytest.raises(ValueError, match="unknown"):
        make_agent(f"ckpt:{ckpt},depth=3")
    with pytest.raises(ValueError, match="temperature"):
        make_agent(f"ckpt:{ckpt},temperature=0")


def test_wrong_observation_layout_is_refused_naming_both(tmp_path: Path) -> None:
    ckpt = write_checkpoint(tmp_path / "old", obs_layout="allfives-obs/0")
    with pytest.raises(ValueError, match="observation layout") as err:
        make_agent(f"ckpt:{ckpt}")
    assert "allfives-obs/0" in str(err.value) and OBS_LAYOUT_ID in str(err.value)
    with pytest.raises(ValueError, match="observation layout"):
        OpponentPool([{"agent": f"ckpt:{ckpt}"}], np.random.default_rng(0))  # training too


def test_wrong_action_space_is_refused(tmp_path: Path) -> None:
    ckpt = write_checkpoint(tmp_path / "a", n_actions=56)
    with pytest.raises(ValueError, match="action space size 56"):
        make_agent(f"ckpt:{ckpt}")


def test_wrong_seat_count_is_refused(tmp_path: Path) -> None:
    ckpt = write_checkpoint(tmp_path / "two")
    with pytest.raises(ValueError, match="trained for 2 seats; this game has 4"):
        play(4, [f"ckpt:{ckpt}", "greedy", "greedy", "greedy"])


def test_wrong_teams_setting_is_refused(tmp_path: Path) -> None:
    ckpt = write_checkpoint(tmp_path / "t", players=4)  # 4 seats with teams (the preset)
    rules = make_rules(players=4, teams=False)
    pool = OpponentPool([{"agent": f"ckpt:{ckpt}"}], np.random.default_rng(0))
    with pytest.raises(ValueError, match="trained with teams; this game is played without"):
        decide(pool.sample(), GameState(rules, 0))


def test_other_rules_warn_once_naming_the_differences(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    ckpt = write_checkpoint(tmp_path / "c2")  # trained under all_fives, 2 seats
    agent = make_agent(f"ckpt:{ckpt}")
    rules = make_rules("muggins", players=2)
    for seed in range(2):
        decide(agent, GameState(rules, seed))
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: checkpoint")
    assert "hand_end 'winner_collects' (trained with 'subtract_own')" in err[0]
    assert "target 100 (trained with 250)" in err[0]
    decide(agent, GameState(make_rules("all_fives", players=2), 0))
    assert capsys.readouterr().err == ""  # the rules it was trained with: no warning


def test_missing_and_corrupt_checkpoints_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not found"):
        make_agent(f"ckpt:{tmp_path / 'nothing'}")
    ckpt = write_checkpoint(tmp_path / "c")
    (ckpt / "policy.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="policy.npz: not a readable policy file"):
        make_agent(f"ckpt:{ckpt}")
    (ckpt / "card.json").write_text("{")
    with pytest.raises(ValueError, match="unreadable card.json"):
        make_agent(f"ckpt:{ckpt}")
    (ckpt / "card.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match="not an allfives-checkpoint/1"):
        make_agent(f"ckpt:{ckpt}")


def test_atomic_write_leaves_old_checkpoint_on_failure(tmp_path: Path) -> None:
    target = write_checkpoint(tmp_path / "c")
    before = (target / "card.json").read_text()

    def fill(tmp: Path) -> None:
        (tmp / "card.json").write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic_dir(target, fill)
    assert (target / "card.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]  # no temporary left behind
    with pytest.raises(OSError):
        write_atomic_dir(tmp_path / "new", fill)
    assert not (tmp_path / "new").exists()


def test_numpy_forward_matches_the_torch_policy() -> None:
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from allfives_train.algorithms.maskable_ppo.sb3_export import from_sb3
    from allfives_train.games.single_agent import AllFivesSingleAgentEnv

    torch.set_num_threads(1)
    for activation in (torch.nn.ReLU, torch.nn.Tanh):
        model = MaskablePPO("MlpPolicy", AllFivesSingleAgentEnv(seed=0), seed=1, device="cpu",
                            policy_kwargs={"net_arch": [32, 16], "activation_fn": activation})
        policy = from_sb3(model.policy)
        obs = np.random.default_rng(0).uniform(0, 1, size=(64, OBS_SIZE)).astype(np.float32)
        with torch.no_grad():
            dist = model.policy.get_distribution(torch.as_tensor(obs))
            expected = dist.distribution.logits.numpy()
        got = policy.logits(obs)
        np.testing.assert_allclose(got - got.max(1, keepdims=True),
                                   expected - expected.max(1, keepdims=True), atol=1e-4)


def test_ckpt_agents_do_not_import_torch(tmp_path: Path) -> None:
    ckpt = write_checkpoint(tmp_path / "c")
    code = ("import sys; from allfives_agents.base import make_agent; "
            f"a = make_agent({('ckpt:' + str(ckpt))!r}); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


SHIPPED = sorted(p.name for p in (ROOT / "checkpoints").iterdir() if p.is_dir())


def test_one_shipped_model_per_setting() -> None:
    assert set(SHIPPED) == {"all_fives_2p", "all_fives_3p", "all_fives_4p_teams", "five_up_2p"}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_checkpoints_load_by_name_and_path_and_play(name: str) -> None:
    by_name = make_agent(f"ckpt:{name}")
    by_path = make_agent(f"ckpt:checkpoints/{name}")
    assert by_name.directory.resolve() == by_path.directory.resolve() == ROOT / "checkpoints" / name
    card = by_name.card
    players, preset = card["players"], card["rules"]["preset"]
    assert name == f"{preset}_{players}p" + ("_teams" if card["teams"] else "")
    assert card["obs_layout"] == OBS_LAYOUT_ID
    for piece in ("card.md", "config.yaml", "eval.json", "learning_curve.png"):
        assert (ROOT / "checkpoints" / name / piece).is_file(), piece
    rules = make_rules(preset=preset, players=players)
    agents = [by_name] + [make_agent("greedy", seed=i) for i in range(1, players)]
    assert play_game(rules, agents, 1).game_over
