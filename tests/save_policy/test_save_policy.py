"""``allfives.save_policy`` (issue 62, item 4): a torch module and an SB3 policy saved as
checkpoints play, through the real ``allfives eval`` CLI in a child process, exactly the games
``allfives.evaluate`` plays with the live policy on the same seed; what cannot be exported,
or a directory holding other files, is refused in one line with nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import allfives
import allfives_env

ROOT = Path(__file__).resolve().parents[2]
AGAINST = ["random", "greedy"]
GAMES, SEED = 12, 7


def cli_eval(directory: Path, tmp_path: Path, *game: str) -> dict[str, dict[str, Any]]:
    """``allfives eval --agents ckpt:DIR random greedy`` in a child process: the pairing rows
    of ckpt:DIR (the first agent) by opponent."""
    out = tmp_path / "eval.json"
    cmd = [sys.executable, "-m", "allfives.cli", "eval", "--agents", f"ckpt:{directory}",
           *AGAINST, "--games", str(GAMES), "--seed", str(SEED), "--workers", "1",
           "--no-progress", "--json", str(out), *game]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(out.read_text())["pairings"]
    return {r["b"]: r for r in rows if r["a"] == f"ckpt:{directory}"}


def live_eval(policy: Callable[[np.ndarray, np.ndarray], int], **game: Any
              ) -> dict[str, dict[str, Any]]:
    return allfives.evaluate(policy, against=AGAINST, games=GAMES, seed=SEED,
                                 **game)["results"]


def same_games(live: dict[str, dict[str, Any]], saved: dict[str, dict[str, Any]]) -> None:
    """Every figure of every pairing equal but the policy's name."""
    assert set(live) == set(saved) == set(AGAINST)
    for opp in AGAINST:
        a = {k: v for k, v in live[opp].items() if k != "a"}
        b = {k: v for k, v in saved[opp].items() if k != "a"}
        assert a == b, opp


def torch_policy(module: Any) -> Callable[[np.ndarray, np.ndarray], int]:
    """The live torch policy: the masked argmax of the module's logits."""
    import torch

    def live(observation: np.ndarray, action_mask: np.ndarray) -> int:
        with torch.no_grad():
            z = module(torch.as_tensor(observation)[None])[0]
        z = z.masked_fill(~torch.as_tensor(action_mask).bool(), -float("inf"))
        return int(z.argmax())

    return live


def small_mlp(seed: int, activation: str = "Tanh") -> Any:
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    act = getattr(torch.nn, activation)
    return torch.nn.Sequential(torch.nn.Linear(386, 32), act(), torch.nn.Linear(32, 16), act(),
                               torch.nn.Linear(16, 140))


@pytest.mark.parametrize("players", [2, 3])
def test_torch_module_plays_the_same_games_through_the_cli(tmp_path: Path, players: int) -> None:
    module = small_mlp(players)
    directory = allfives.save_policy(module, tmp_path / "ckpt", players=players)
    assert sorted(p.name for p in directory.iterdir()) == ["card.json", "policy.npz"]
    live = live_eval(torch_policy(module), players=players)
    same_games(live, cli_eval(directory, tmp_path, "--players", str(players)))
    # the games depend on the network: another one plays others
    other = live_eval(torch_policy(small_mlp(players + 10)), players=players)
    assert any(other[o]["points_per_hand_a"] != live[o]["points_per_hand_a"] for o in AGAINST)


def test_sb3_maskable_ppo_plays_the_same_games_through_the_cli(tmp_path: Path) -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    gymnasium = pytest.importorskip("gymnasium")
    import torch

    torch.set_num_threads(1)
    env = gymnasium.make("allfives/AllFives-v0", opponents=["greedy"])
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, seed=3, device="cpu",
                                    policy_kwargs={"net_arch": [32, 32]})

    def live(observation: np.ndarray, action_mask: np.ndarray) -> int:
        action, _ = model.predict(observation, action_masks=action_mask.astype(bool),
                                  deterministic=True)
        return int(action)

    directory = allfives.save_policy(model, tmp_path / "sb3")
    same_games(live_eval(live), cli_eval(directory, tmp_path))
    card = json.loads((directory / "card.json").read_text())
    assert card["value"] is True and card["policy"]["hidden"] == [32, 32]
    # its critic is the value network search:net=DIR,value=1 reads
    from allfives_agents.trained.checkpoint import load_checkpoint
    from allfives_agents.trained.save_policy import probe_observations

    _, _, policy = load_checkpoint(str(directory))
    x = probe_observations(games=1)
    with torch.no_grad():
        want = model.policy.predict_values(torch.as_tensor(x)).numpy()[:, 0]
    np.testing.assert_allclose(policy.value(x), want, rtol=1e-4, atol=1e-5)


def test_saved_policy_plays_everywhere_a_checkpoint_does(tmp_path: Path) -> None:
    """An opponent in an AEC loop, the network inside search, the browser's --model."""
    directory = allfives.save_policy(small_mlp(1, "ReLU"), tmp_path / "c")
    result = allfives.evaluate(f"search:net={directory},sims=4", against=["greedy"],
                                   games=2, seed=0)
    assert result["results"]["greedy"]["games"] == 2
    from allfives_agents.web.gate import check_models

    assert check_models({"mine": str(directory)}) == {"mine": directory.resolve()}
    env = allfives_env.env(players=2)
    player = allfives.opponent(f"ckpt:{directory}", env)
    env.reset(seed=0)
    for agent in env.agent_iter():
        env.step(player(agent))
    assert env.game is not None and env.game.game_over


def test_numpy_policy_and_its_arrays(tmp_path: Path) -> None:
    from allfives_agents.trained.policy_numpy import NumpyPolicy

    rng = np.random.default_rng(0)
    policy = NumpyPolicy([(rng.normal(size=(386, 8)), np.zeros(8)),
                          (rng.normal(size=(8, 140)), rng.normal(size=140))], "relu")
    a = allfives.save_policy(policy, tmp_path / "a")
    b = allfives.save_policy(policy.arrays(), tmp_path / "b")
    x = np.asarray(rng.random((5, 386)), np.float32)
    for d in (a, b):
        np.testing.assert_array_equal(NumpyPolicy.load(d / "policy.npz").logits(x),
                                      policy.logits(x))


# ---------------------------------------------------------------- refusals
def refused(policy: Any, directory: Path, match: str, **game: Any) -> str:
    with pytest.raises(ValueError, match=match) as err:
        allfives.save_policy(policy, directory, **game)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_what_cannot_be_exported_is_refused_in_one_line(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    nn = torch.nn
    target = tmp_path / "never"
    refused(nn.Sequential(nn.Linear(386, 8), nn.GELU(), nn.Linear(8, 140)), target,
            "has a GELU layer: supported are Linear layers with ReLU or Tanh")
    refused(nn.Sequential(nn.Linear(386, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(),
                          nn.Linear(8, 140)), target, "mixes activations")
    refused(nn.Sequential(nn.Linear(386, 140), nn.ReLU()), target, "no activation after")
    refused(nn.Sequential(nn.Linear(300, 140)), target, "maps 300 inputs to 140 outputs")
    refused(nn.Sequential(nn.Conv1d(1, 2, 3)), target, "has a Conv1d layer")

    class Reordered(nn.Module):  # Linear, ReLU, Linear defined; ReLU, Linear, Linear applied
        def __init__(self) -> None:
            super().__init__()
            self.a, self.act, self.b = nn.Linear(386, 386), nn.ReLU(), nn.Linear(386, 140)

        def forward(self, x: Any) -> Any:
            return self.b(self.a(self.act(x - 0.5)))

    refused(Reordered(), target, "does not compute its layers in the order")
    refused(lambda observation, action_mask: 0, target, "plain callable: it has no weights")
    refused("heuristic", target, "cannot export str")
    refused(small_mlp(0), target, "unknown rule option", colour="red")
    assert not target.exists()


def test_directory_rule_never_overwrites_other_files(tmp_path: Path) -> None:
    module = small_mlp(0)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    refused(module, theirs, "holds files save_policy did not write")
    assert sorted(p.name for p in theirs.iterdir()) == ["notes.txt"]
    # a checkpoint another program wrote (a card without save_policy's writer) is kept too
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "card.json").write_text('{"format": "allfives-checkpoint/1"}')
    refused(module, foreign, "holds files save_policy did not write")
    assert (foreign / "card.json").read_text() == '{"format": "allfives-checkpoint/1"}'
    refused(module, theirs / "notes.txt", "is a file")
    # its own earlier output is replaced, and an empty directory is used
    ours = allfives.save_policy(module, tmp_path / "ours")
    again = allfives.save_policy(small_mlp(5), ours, players=3)
    assert json.loads((again / "card.json").read_text())["players"] == 3
    (tmp_path / "empty").mkdir()
    allfives.save_policy(module, tmp_path / "empty")
    (ours / "extra.bin").write_bytes(b"x")  # its output plus someone else's file: refused
    refused(module, ours, "extra.bin")
