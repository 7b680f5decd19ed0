"""Search-distillation experiment (issue 11), step 2: fit the residual actor to the labels.

Starts from a checkpoint's heuristic-residual actor (``ResidualPolicy``), rescales its logits
to fit the targets best, then minimises the cross-entropy to softmax(search value /
``tau``) over the legal moves (``hard``: plus that weight x the cross-entropy to search's
best move). Prints, on 5% of the positions held out, how often the actor's argmax is the
search's best move and the mean regret (search value of its best move minus that of the
actor's move, in points); writes a copy of the checkpoint with the new ``policy.npz``.
Superseded by ``allfives train`` with ``algo: search_distill``
(train/algorithms/search_distill/trainer.py, whose
functions this uses).

    PYTHONPATH=. python experiments/distill/fit.py D1.npz,D2.npz OUT_DIR '{"epochs": 6}'
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_train.algorithms.ppo_batched.net import actor_from
from allfives_train.algorithms.search_distill.trainer import legal_logits, scale_logits


def load(files: list[str]) -> dict[str, torch.Tensor]:
    parts = [dict(np.load(f)) for f in files]
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return {k: torch.as_tensor(v.astype(np.float32 if k != "act" else np.int64))
            for k, v in data.items()}


def fit(files: list[str], out: str, tau: float = 1.0, epochs: int = 6, lr: float = 1e-4,
        init: str = "experiments/checkpoints/ppo_all_fives_2p", batch: int = 512, hard: float = 0.0,
        seed: int = 0) -> dict[str, Any]:
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    d = load(files)
    obs, feat, act, val = d["obs"], d["feat"], d["act"], d["val"]
    legal = act >= 0
    target = torch.softmax((val / tau).masked_fill(~legal, -1e9), 1)
    best = val.masked_fill(~legal, -1e9).argmax(1)
    net = actor_from(NumpyPolicy.load(Path(init) / "policy.npz"))
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(act))
    cut = max(1000, len(act) // 20)
    test, train = perm[:cut], perm[cut:]

    def report(tag: str) -> dict[str, float]:
        with torch.no_grad():
            z = legal_logits(net, obs[test], feat[test], act[test])
            ch = z.argmax(1)
            t = test
            res = {"agree": (ch == best[t]).float().mean().item(),
                   "regret": (val[t].gather(1, best[t, None])
                              - val[t].gather(1, ch[:, None])).mean().item(),
                   "ce": -(target[t] * torch.log_softmax(z, 1)).sum(1).mean().item()}
        print(tag, json.dumps({k: round(v, 4) for k, v in res.items()}), flush=True)
        return res

    start = report("start")
    with torch.no_grad():  # the logit scale that fits the targets best, before training
        i = torch.as_tensor(train[:5000])
        z = legal_logits(net, obs[i], feat[i], act[i])
        cs = np.geomspace(0.01, 2.0, 40)
        ce = [-(target[i] * torch.log_softmax(z * c, 1)).sum(1).mean().item() for c in cs]
    scale_logits(net, float(cs[int(np.argmin(ce))]))
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    t0 = time.time()
    for ep in range(epochs):
        rng.shuffle(train)
        for s in range(0, len(train), batch):
            i = torch.as_tensor(train[s:s + batch])
            logp = torch.log_softmax(legal_logits(net, obs[i], feat[i], act[i]), 1)
            loss = -(target[i] * logp).sum(1).mean()
            if hard:
                loss = loss - hard * logp.gather(1, best[i, None]).mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
        end = report(f"epoch {ep + 1} ({time.time() - t0:.0f}s)")
    target_dir = Path(out)
    if not target_dir.exists():
        shutil.copytree(init, target_dir)
    net.numpy_policy().save(target_dir / "policy.npz")
    return {"positions": len(act), "start": start, "end": end}


if __name__ == "__main__":
    options = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    print(json.dumps(fit(sys.argv[1].split(","), sys.argv[2], **options)))
