"""``belief_aux``: a head on the actor's torso that learns which tiles each other seat holds
(a training signal from the deal's hidden hands), while the actor, the checkpoint and
everything that plays see only the seat's own observation."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
torch = pytest.importorskip("torch")

from allfives_env.cli import main  # noqa: E402
from allfives_env.observation import HIDDEN_HANDS_SIZE  # noqa: E402
from allfives_env.rules import make_rules  # noqa: E402
from allfives_train import belief  # noqa: E402
from allfives_train.config import DEFAULT_CONFIG, load_config  # noqa: E402
from allfives_train.fast_net import make_net  # noqa: E402
from allfives_train.shards import learner_obs_size  # noqa: E402
from allfives_train.vector_env import AllFivesVectorEnv  # noqa: E402

RESIDUAL = DEFAULT_CONFIG.parent / "residual_2p.yaml"
DMC = DEFAULT_CONFIG.parent / "dmc_2p.yaml"
SMALL = {"belief_aux": 1.0, "features": 9, "net_arch": [32, 32]}


def observations(players: int, teams: bool, rows: int, seed: int) -> tuple[torch.Tensor,
                                                                         torch.Tensor]:
    """Learner observations (with the hidden hands) and masks of random play, ``rows`` of
    them from 64 games over a few moves each."""
    env = AllFivesVectorEnv(make_rules(players=players, teams=teams), 64, seed=seed,
                            action_features=9, hidden=True)
    obs, infos = env.reset(seed=seed)
    rng, seen, masks = np.random.default_rng(seed), [], []
    while sum(len(o) for o in seen) < rows:
        seen.append(obs)
        masks.append(infos["action_mask"])
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        obs, _, _, _, infos = env.step(acts)
    return (torch.as_tensor(np.concatenate(seen)[:rows]),
            torch.as_tensor(np.concatenate(masks)[:rows]))


@pytest.mark.parametrize("players,teams", [(2, False), (3, False), (4, True)])
def test_the_head_scores_the_other_seats_hands(players: int, teams: bool) -> None:
    cfg = load_config(RESIDUAL, {**SMALL, "players": players, "teams": teams})
    net = make_net(cfg)
    assert net.belief is not None and net.belief.out_features == (players - 1) * 28
    x, mask = observations(players, teams, 64, seed=players)
    assert x.shape[1] == learner_obs_size(cfg, 9)
    with torch.no_grad():  # a zero-initialised head says 0.5 everywhere
        assert float(belief.loss(net, x, players)) == pytest.approx(math.log(2), abs=1e-6)
        torch.nn.init.normal_(net.belief.weight, std=0.5)
        flipped = x.clone()
        flipped[:, -HIDDEN_HANDS_SIZE:] = 1 - flipped[:, -HIDDEN_HANDS_SIZE:]
        assert float(belief.loss(net, x, players)) != float(belief.loss(net, flipped, players))
        assert torch.equal(net.logits(x, mask), net.logits(flipped, mask))  # the actor: never
        assert torch.equal(net.value(x), net.value(flipped))  # nor the critic, without oracle


def test_after_the_actors_logits_the_loss_reuses_their_hidden_layer() -> None:
    """An update's belief term reads the hidden layer the actor's logits computed for the same
    minibatch (the torso runs once) and is the loss computed afresh, gradients included."""
    cfg = load_config(RESIDUAL, {**SMALL, "players": 2})
    net = make_net(cfg)
    torch.nn.init.normal_(net.belief.weight, std=0.5)
    x, mask = observations(2, False, 64, seed=7)
    calls = []
    hook = net.torso[0].register_forward_hook(lambda *a: calls.append(1))
    fresh = belief.loss(net, x, 2)
    assert len(calls) == 1
    z = net.logits(x, mask)
    kept = belief.loss(net, x, 2)
    assert len(calls) == 2 and net.last_hidden is None  # taken, and cleared
    assert torch.allclose(kept, fresh)
    (z.masked_fill(~mask, 0).sum() + kept).backward()
    assert net.belief.weight.grad is not None and net.torso[0].weight.grad is not None
    net.logits(x, mask)
    belief.loss(net, x.clone(), 2)  # another tensor: computed afresh
    assert len(calls) == 4
    hook.remove()


def test_it_learns_more_than_how_many_tiles_a_hand_holds() -> None:
    """Fitted on the hidden hands alone, the head beats the best constant guess per tile: the
    torso learns what the seat's hand and the table rule out."""
    players = 2
    net = make_net(load_config(RESIDUAL, {**SMALL, "players": players}))
    x, _ = observations(players, False, 4096, seed=5)
    target = x[:, -HIDDEN_HANDS_SIZE:][:, :28]
    rate = target.mean(0).clamp(1e-4, 1 - 1e-4)
    constant = float(torch.nn.functional.binary_cross_entropy(rate.expand_as(target), target))
    torch.manual_seed(0)
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(300):
        idx = torch.randint(0, len(x), (256,))
        loss = belief.loss(net, x[idx], players)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        assert float(belief.loss(net, x, players)) < 0.8 * constant


@pytest.mark.parametrize("overrides,message", [
    ({"belief_aux": -0.5}, "must be 0 .none. or a positive weight"),
    ({"belief_aux": 1.0, "algo": "search_distill"}, "with algo ppo_batched or dmc"),
    ({"belief_aux": 1.0, "policy": "mlp"}, "with algo ppo_batched or dmc"),
])
def test_bad_values_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_config(RESIDUAL, overrides)


@pytest.mark.parametrize("config,flags", [
    (RESIDUAL, ["--features", "9", "--net-arch", "16", "16", "--n-envs", "32", "--n-steps",
                "64"]),
    (DMC, ["--device", "cpu", "--n-envs", "8", "--n-steps", "16", "--batch-size", "64",
           "--n-epochs", "1"]),
])
def test_a_run_with_it_trains_resumes_and_its_checkpoint_plays(tmp_path: Path, config: Path,
                                                               flags: list[str]) -> None:
    run = tmp_path / "run"
    common = ["train", "--config", str(config), "--belief-aux", "0.5", *flags,
              "--eval-games", "4", "--rollout-workers", "1", "--run-dir", str(run), "--quiet"]
    assert main([*common, "--total-steps", str(2 * 32 * 64 if config == RESIDUAL else 256)]) == 0
    saved = torch.load(run / "final" / "trainer.pt", weights_only=True)["agent"]
    assert "belief.weight" in saved and bool(saved["belief.weight"].any())  # it trained
    with np.load(run / "final" / "policy.npz") as exported:
        assert not any("belief" in name for name in exported.files)
    assert main([*common, "--total-steps", str(4 * 32 * 64 if config == RESIDUAL else 512),
                 "--resume"]) == 0
    assert main(["eval", "--agents", f"ckpt:{run / 'final'}", "greedy", "--games", "2",
                 "--workers", "1", "--no-progress"]) == 0
