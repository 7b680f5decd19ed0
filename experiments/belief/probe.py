"""Did the belief head of a ``belief_aux`` run learn the other hand? Its binary cross-entropy on
the hidden hand, against the best constant guess per tile, on positions of games the run's
own actor plays (argmax) against ``heuristic``, from fresh deals. From the repository root:

    .venv/bin/python experiments/belief/probe.py runs/belief_dmc [--seed 20261250]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from allfives_env.game.observation import HIDDEN_HANDS_SIZE, OBS_VIEWS
from allfives_train import belief
from allfives_train.algorithms.ppo_batched.net import make_net
from allfives_train.config import load_config, make_rules_for
from allfives_train.games.vector_env import AllFivesVectorEnv


def positions(net: torch.nn.Module, cfg, seed: int, rows: int) -> torch.Tensor:
    env = AllFivesVectorEnv(make_rules_for(cfg), 256, [{"agent": "heuristic", "weight": 1.0}], seed=seed,
                            action_features=cfg.value("features"), hidden=True)
    obs, infos = env.reset(seed=seed)
    seen: list[np.ndarray] = []
    while sum(len(o) for o in seen) < rows:
        seen.append(obs)
        with torch.no_grad():
            z = net.logits(torch.as_tensor(obs), torch.as_tensor(infos["action_mask"]))
        obs, _, _, _, infos = env.step(z.argmax(-1).numpy())
    return torch.as_tensor(np.concatenate(seen)[:rows])


def counting(x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """2 seats: the other hand's size spread evenly over the tiles the seat has not seen (not
    in its hand, not played): what counting alone knows."""
    views = {name: x[:, s] for name, s in OBS_VIEWS.items()}
    seen = views["hand"] + views["played_by"].reshape(len(x), 4, 28).sum(1)
    unseen = (seen == 0).float()
    k = target.sum(1, keepdim=True)
    return (k / unseen.sum(1, keepdim=True).clamp(min=1) * unseen).clamp(1e-4, 1 - 1e-4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--seed", type=int, default=20261250)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--at", default="final", help="the checkpoint inside the run")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = load_config(args.run / "config.yaml", {"init_from": None})
    net = make_net(cfg)
    net.load_state_dict(torch.load(args.run / args.at / "trainer.pt",
                                   weights_only=True)["agent"])
    x = positions(net, cfg, args.seed, args.rows)
    n = (cfg.players - 1) * belief.TILES
    start = x.shape[1] - HIDDEN_HANDS_SIZE
    target = x[:, start:start + n]
    rate = target.mean(0).clamp(1e-4, 1 - 1e-4)
    with torch.no_grad():
        head = float(belief.loss(net, x, cfg.players))
        const = float(torch.nn.functional.binary_cross_entropy(rate.expand_as(target), target))
        count = float(torch.nn.functional.binary_cross_entropy(counting(x, target), target))
        p = torch.sigmoid(net.belief(net.torso[:-1](x[:, :net.obs_size])))
        held = target.sum(1)
        top = torch.topk(p, int(held.max()), dim=1).indices
        hits = [float(target[i, top[i, :int(k)]].sum() / k) for i, k in enumerate(held) if k]
    print(f"{len(x):,} positions (seed {args.seed}), binary cross-entropy per tile: belief "
          f"head {head:.4f}, best constant per tile {const:.4f}, counting (the other hand's "
          f"size over the unseen tiles; 2 seats) {count:.4f}; of the other hand's k tiles, "
          f"the head's k likeliest hold {100 * np.mean(hits):.1f}% on average")


if __name__ == "__main__":
    main()
