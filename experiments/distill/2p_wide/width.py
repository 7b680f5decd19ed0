"""Is a wider network the missing piece in 2 seats? (issue 11)

Fits an action_features student to the wide 2-seat labels as ``allfives train`` does
(allfives_train.algorithms.search_distill.trainer: the same held-out split, rescale and loss) and
prints, after each epoch, the
held-out agreement, regret and cross-entropy and the cross-entropy on 20,000 training
positions. Run from the repository root after ``experiments/configs/distill_wide_2p.yaml``:

    PYTHONPATH=. python experiments/distill/2p_wide/width.py ARCH INIT HEAD EPOCHS LR [TAU]

ARCH: the torso, e.g. ``256x256``; INIT: a checkpoint to start from or ``none`` (a fresh
heuristic-residual actor); HEAD: the per-move head's width (``move_head``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

from allfives_train.algorithms.search_distill.label import load_shards
from allfives_train.algorithms.search_distill.trainer import Targets, make_student, rescale
from allfives_train.config import load_config

torch.set_num_threads(1)
arch, init, head, epochs, lr = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    float(sys.argv[5])
tau = float(sys.argv[6]) if len(sys.argv) > 6 else 1.0
shards = sorted(Path("runs/distill_wide_all_fives_2p/labels").glob("shard_*.npz"))
data = Targets(load_shards(shards), tau, 5)
cfg = load_config("experiments/configs/distill_wide_2p.yaml", {
    "init_from": None if init == "none" else init,
    "net_arch": [int(x) for x in arch.split("x")], "move_head": head})
torch.manual_seed(0)
net = make_student(cfg)
print(arch, init, head, "before", data.held_out(net), flush=True)
rescale(net, data)
opt = torch.optim.Adam(net.parameters(), lr=lr)
rng = np.random.default_rng(0)
order = data.train.copy()
t0 = time.time()
for ep in range(epochs):
    rng.shuffle(order)
    for s in range(0, len(order), 512):
        i = torch.as_tensor(order[s:s + 512])
        loss = data.loss(data.logits(net, i), i)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
    with torch.no_grad():
        tr = torch.as_tensor(data.train[:20000])
        train_ce = float(data.loss(data.logits(net, tr), tr))
    print(ep + 1, round(time.time() - t0), data.held_out(net), "train_ce", round(train_ce, 4),
          flush=True)
