"""The single-file learner (``examples/cleanrl_ppo_vector.py``) trains a few updates through the
public API in every action view, and the checkpoint ``--save`` writes plays its moves."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

pytest.importorskip("numba")
torch = pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cleanrl_ppo_vector.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cleanrl_ppo_vector", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("view", ["raw", "facts", "heuristic"])
def test_a_few_updates_then_the_checkpoint_plays_the_same_moves(view: str, tmp_path: Path
                                                                ) -> None:
    from allfives_agents.trained.checkpoint import load_checkpoint

    example = _load()
    out = example.main(["--view", view, "--total-steps", "512", "--num-envs", "16",
                        "--num-steps", "16", "--update-epochs", "1", "--lr", "0.01",
                        "--save", str(tmp_path / "ckpt"), "--eval-games", "8"])
    assert out["steps"] == 512 and 0.0 <= out["eval_win_rate"] <= 1.0
    policy = load_checkpoint(str(tmp_path / "ckpt"))[2]
    # the network the checkpoint holds, on observations of the view: the live torch logits
    args = example.parse_args(["--view", view])
    envs = example.make_envs(args, 16, ["random"], seed=7)
    obs, infos = envs.reset(seed=7)
    mask = infos["action_mask"]
    torch.manual_seed(0)
    agent = example.Agent((obs.shape[1] - example.OBS) // example.ACTIONS, 128, 64)
    for p in agent.parameters():  # nonzero everywhere, so every term of the scorer counts
        torch.nn.init.normal_(p, std=0.3)
    with torch.no_grad():
        live = agent.logits(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()
    example.allfives.save_policy(agent.numpy_arrays(view), tmp_path / "again")
    saved = load_checkpoint(str(tmp_path / "again"))[2]
    assert type(saved) is type(policy)
    exported = np.where(mask, saved.logits(obs), -1e8)
    assert np.allclose(np.where(mask, live, 0), np.where(mask, exported, 0), atol=1e-3)
    assert (live.argmax(1) == exported.argmax(1)).all()
    # the saved checkpoint as a batched opponent (its view's rows computed for it)
    foes = example.make_envs(args, 8, [f"ckpt:{tmp_path / 'ckpt'}"], seed=3)
    obs, infos = foes.reset(seed=3)
    for _ in range(40):
        legal = infos["action_mask"]
        obs, _, _, _, infos = foes.step(legal.argmax(1))
    assert obs.shape == (8, foes.single_observation_space.shape[0])


def test_a_self_play_pool_trains() -> None:
    out = _load().main(["--view", "heuristic", "--total-steps", "256", "--num-envs", "16",
                        "--num-steps", "16", "--update-epochs", "1",
                        "--opponents", "self*2", "greedy"])
    assert out["steps"] == 256


def test_the_device_is_chosen_and_a_bad_one_is_one_line() -> None:
    """``--device cpu`` trains as the default does here; an unknown device, or cuda where torch
    sees no GPU, stops with one line naming what is allowed (the run itself, on CUDA, is the
    same code with its tensors on the GPU)."""
    import torch

    example = _load()
    tiny = ["--view", "raw", "--total-steps", "256", "--num-envs", "16", "--num-steps", "16",
            "--update-epochs", "1", "--opponents", "greedy"]
    assert example.main([*tiny, "--device", "cpu"])["steps"] == 256
    bad = ["tpu"] + ([] if torch.cuda.is_available() else ["cuda"])
    for device in bad:
        with pytest.raises(SystemExit, match="use auto, cpu or cuda"):
            example.main([*tiny, "--device", device])
