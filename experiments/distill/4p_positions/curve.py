"""Does the 4-seat team student gain from more positions? Fit the recipe's PPO start on a
fraction of the recipe run's labels (the same held-out 5% for every fraction) and print the
held-out figures after each fit (allfives_train.algorithms.search_distill.trainer's own fit, 15
epochs).

    PYTHONPATH=. .venv/bin/python experiments/distill/4p_positions/curve.py RUN_DIR
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_train.algorithms.ppo_batched.net import actor_from
from allfives_train.algorithms.search_distill.label import load_shards
from allfives_train.algorithms.search_distill.trainer import Targets, one_pass, rescale

torch.set_num_threads(1)
run = Path(sys.argv[1])
shards = sorted((run / "2_labels256" / "labels").glob("*.npz")) + \
    sorted((run / "3_distill" / "labels").glob("*.npz"))
start = run / "1_ppo" / "final" / "policy.npz"
net0 = actor_from(NumpyPolicy.load(start))
data = load_shards(shards, net0.n_features)
full = Targets(data, 1.0, 4)
print(f"{len(full.act):,} positions, {len(full.test):,} held out")
for frac in (0.25, 0.5, 1.0):
    net = actor_from(NumpyPolicy.load(start))
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    rescale(net, full)
    rng = np.random.default_rng(4)
    order = full.train[: int(len(full.train) * frac)].copy()
    best = None
    for _epoch in range(15):
        rng.shuffle(order)
        one_pass(net, opt, full, order, 512, 1.0)
        h = full.held_out(net)
        best = h if best is None or h["cross_entropy"] < best["cross_entropy"] else best
    print(f"fraction {frac}: {len(order):,} positions; last {h}; best CE {best}", flush=True)
