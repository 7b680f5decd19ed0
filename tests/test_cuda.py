"""Every learner on CUDA (issue 52): the random draws are made on the device they feed, a
run's checkpoint plays on the CPU, and a CUDA run resumes on the CPU.

The first tests run anywhere: they check the draws' device through :func:`generator_on`,
:func:`check_generator` and ``sample()`` (the bug they guard against: a CPU generator drawing
for CUDA logits). The rest train each learner for a few updates with ``device: cuda`` and
skip where torch sees no CUDA device.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")
torch = pytest.importorskip("torch")

import allfives_train.algorithms.search_distill.trainer as distill  # noqa: E402
import allfives_train.games.shards as shards  # noqa: E402
from allfives.cli import main  # noqa: E402
from allfives_env.game.observation import OBS_SIZE  # noqa: E402
from allfives_env.game.tiles import N_ACTIONS  # noqa: E402
from allfives_train.algorithms.ppo_batched.net import (  # noqa: E402
    check_generator,
    epsilon_greedy,
    features_of,
    generator_on,
    make_net,
    sample,
)
from allfives_train.config import DEFAULT_CONFIG, MASKABLE_CONFIG, load_config  # noqa: E402

CONFIGS = DEFAULT_CONFIG.parent
SELFPLAY = CONFIGS / "selfplay_2p.yaml"  # a ppo_batched config (the main job distills)
CPU = torch.device("cpu")
META = torch.device("meta")  # a device that is not the CPU, on any machine
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="torch sees no CUDA device here")


# ------------------------------------------------------------------ anywhere: the draws' device
def test_generator_on_the_cpu_is_the_stream_it_always_was() -> None:
    g = generator_on(CPU, 123)
    assert g.device == CPU
    assert torch.equal(torch.rand(50, generator=g),
                       torch.rand(50, generator=torch.Generator().manual_seed(123)))


def test_sample_draws_on_the_logits_device_with_a_generator_there() -> None:
    logits = torch.randn(64, N_ACTIONS, generator=torch.Generator().manual_seed(0))
    g = generator_on(logits.device, 7)
    assert g.device == logits.device
    action = sample(logits, g)
    assert action.device == logits.device and action.shape == (64,)
    # the CPU's draws are bit for bit those of the old code (no device argument)
    u = torch.rand(logits.shape, generator=torch.Generator().manual_seed(7)).clamp_(1e-9, 1.0)
    assert torch.equal(action, torch.argmax(logits - torch.log(-torch.log(u)), dim=-1))
    # without a generator the uniforms are made like the logits, on their device
    assert sample(torch.zeros(3, N_ACTIONS, device=META)).device == META


def test_a_cpu_generator_drawing_for_logits_elsewhere_is_refused() -> None:
    """What the CUDA path did (logits on cuda:0, a CPU generator), with the meta device in
    place of a GPU: refused by name, before any draw."""
    cpu_gen = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="torch.Generator on cpu draws for tensors on meta"):
        sample(torch.zeros(4, N_ACTIONS, device=META), cpu_gen)
    with pytest.raises(ValueError, match="generator_on"):
        check_generator(cpu_gen, META)
    check_generator(cpu_gen, CPU)
    check_generator(None, META)  # torch's global generator: the device's own


def test_the_dmc_draw_refuses_a_generator_on_another_device() -> None:
    cfg = load_config(CONFIGS / "dmc_2p.yaml", {"init_from": None, "features": 9,
                                                 "move_head": 0, "net_arch": [8]})
    agent = make_net(cfg)
    width = OBS_SIZE + N_ACTIONS * features_of(agent)
    obs, mask = torch.zeros(2, width, device=META), torch.ones(2, N_ACTIONS, dtype=torch.bool,
                                                               device=META)
    with pytest.raises(ValueError, match="on meta"):
        epsilon_greedy(agent, obs, mask, 0.5, torch.Generator().manual_seed(0))


def test_a_shard_group_draws_with_generators_on_its_device(tmp_path: Path) -> None:
    cfg = load_config(SELFPLAY, {"n_envs": 4, "rollout_shards": 2, "net_arch": [8]})
    agent = make_net(cfg)
    group = shards.ShardGroup(cfg, [0, 1], features_of(agent), agent, CPU)
    try:
        group.reset(3)
        assert [g.device for g in group.gens.values()] == [CPU, CPU]
        assert group.gens[1].initial_seed() == shards.shard_seed(4, 1)
    finally:
        group.close()


# ------------------------------------------------------------------ on CUDA: every learner
class Draws:
    """Wraps the rollouts' draws (``sample`` and ``epsilon_greedy``) to record where each ran."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[tuple[str, str, str]] = []  # (what, generator's device, draw's device)
        real_sample, real_act = shards.sample, shards.epsilon_greedy

        def spy_sample(logits: Any, generator: Any = None) -> Any:
            out = real_sample(logits, generator)
            self.seen.append(("sample", _where(generator), out.device.type))
            return out

        def spy_act(agent: Any, obs: Any, mask: Any, epsilon: float, generator: Any = None
                    ) -> Any:
            out = real_act(agent, obs, mask, epsilon, generator)
            self.seen.append(("act", _where(generator), out.device.type))
            return out

        monkeypatch.setattr(shards, "sample", spy_sample)
        monkeypatch.setattr(shards, "epsilon_greedy", spy_act)

    def all_on(self, device: str) -> bool:
        return bool(self.seen) and all(g == d == device for _, g, d in self.seen)


def _where(generator: Any) -> str:
    return "global" if generator is None else generator.device.type


def _plays_on_the_cpu(final: Path) -> None:
    """The checkpoint's trainer state loads on the CPU and its policy.npz plays there."""
    state = final / "trainer.pt"
    if state.is_file():
        loaded = torch.load(state, map_location="cpu", weights_only=True)
        assert all(v.device == CPU for v in loaded["agent"].values())
    assert main(["eval", "--agents", f"ckpt:{final}", "greedy", "--games", "2",
                 "--workers", "1", "--no-progress"]) == 0


FAST_TINY = ["--n-envs", "16", "--n-steps", "8", "--batch-size", "64", "--n-epochs", "1",
             "--eval-games", "4", "--rollout-workers", "1", "--quiet"]
LEARNERS = {
    "ppo_batched": ["--config", str(SELFPLAY), "--net-arch", "16", "16",
                    "--total-steps", "256", *FAST_TINY],
    "ppo_batched_mlp": ["--config", str(CONFIGS / "fast_2p.yaml"), "--net-arch", "16", "16",
                        "--total-steps", "256", *FAST_TINY],
    "dmc": ["--config", str(CONFIGS / "dmc_2p.yaml"), "--total-steps", "256", *FAST_TINY],
}


@needs_cuda
@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_a_fast_learner_trains_on_cuda_and_resumes_on_the_cpu(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, learner: str) -> None:
    draws = Draws(monkeypatch)
    run = tmp_path / "run"
    args = ["train", *LEARNERS[learner], "--run-dir", str(run)]
    assert main([*args, "--device", "cuda"]) == 0
    assert draws.all_on("cuda"), draws.seen[:5]
    _plays_on_the_cpu(run / "final")
    draws.seen.clear()
    assert main([*args, "--total-steps", "512", "--device", "cpu",
                 "--resume"]) == 0  # a CUDA run continued on the CPU
    assert draws.all_on("cpu"), draws.seen[:5]
    assert json.loads((run / "final" / "card.json").read_text())["steps"] >= 512


@needs_cuda
def test_search_distillation_fits_on_cuda(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = distill.one_pass

    def spy(net: Any, optimizer: Any, data: Any, order: np.ndarray, *rest: Any) -> None:
        seen.append(f"{next(net.parameters()).device.type}/{data.obs.device.type}")
        real(net, optimizer, data, order, *rest)

    monkeypatch.setattr(distill, "one_pass", spy)
    run = tmp_path / "run"
    assert main(["train", "--config", str(CONFIGS / "distill_2p.yaml"), "--init-from", "null",
                 "--net-arch", "16", "16", "--distill-teacher", "search:sims=8,min_worlds=2",
                 "--distill-shard-games", "1", "--distill-epochs", "2", "--eval-games", "2",
                 "--total-steps", "200", "--label-workers", "1", "--device", "cuda",
                 "--run-dir", str(run), "--quiet"]) == 0
    assert seen and set(seen) == {"cuda/cuda"}, seen
    _plays_on_the_cpu(run / "final")


@needs_cuda
def test_maskable_ppo_trains_on_cuda_through_sb3(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import allfives_train.algorithms.maskable_ppo.trainer as ppo

    devices: list[str] = []
    real = ppo.build_model

    def spy(cfg: Any, env: Any, tb_dir: Path) -> Any:
        model = real(cfg, env, tb_dir)
        devices.append(model.device.type)
        return model

    monkeypatch.setattr(ppo, "build_model", spy)
    run = tmp_path / "run"
    assert main(["train", "--config", str(MASKABLE_CONFIG), "--n-envs", "4", "--n-steps", "16",
                 "--batch-size", "32", "--n-epochs", "1", "--total-steps", "128",
                 "--bc-samples", "200", "--bc-epochs", "1", "--bc-workers", "1",
                 "--eval-games", "4", "--device", "cuda", "--run-dir", str(run),
                 "--quiet"]) == 0
    assert devices == ["cuda"]
    _plays_on_the_cpu(run / "final")


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is here: device cuda trains")
@pytest.mark.parametrize("config", [MASKABLE_CONFIG, CONFIGS / "distill_2p.yaml",
                                    CONFIGS / "dmc_2p.yaml", SELFPLAY])
def test_device_cuda_without_one_is_one_line_exit_2(tmp_path: Path, config: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["train", "--config", str(config), "--device", "cuda", "--run-dir", str(run),
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no CUDA device is available here" in err and "\n" not in err, err
    assert not run.exists()
