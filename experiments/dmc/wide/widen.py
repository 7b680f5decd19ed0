"""Widen an action_features checkpoint's torso without changing its play (net2net): each hidden
layer gets new units whose incoming weights are random and whose outgoing weights are 0, so the
logits are unchanged until training moves them. Writes a copy of the checkpoint directory.

    PYTHONPATH=. python experiments/dmc/wide/widen.py experiments/checkpoints/distill2_all_fives_2p 256 256 OUT
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np

from allfives_agents.trained.checkpoint import load_checkpoint
from allfives_agents.trained.policy_numpy import ResidualPolicy


def widen(policy: ResidualPolicy, sizes: list[int], seed: int = 0) -> ResidualPolicy:
    """``policy`` with hidden layers of ``sizes`` (each at least as wide as now)."""
    rng = np.random.default_rng(seed)
    layers = [(w.copy(), b.copy()) for w, b in policy.layers]
    if len(sizes) != len(layers) - 1:
        raise ValueError(f"{len(layers) - 1} hidden layers, {len(sizes)} sizes given")
    for i, new in enumerate(sizes):
        w, b = layers[i]
        old = w.shape[1]
        if new < old:
            raise ValueError(f"layer {i}: {old} units, cannot narrow to {new}")
        extra = rng.normal(0.0, 1.0 / np.sqrt(w.shape[0]), (w.shape[0], new - old))
        layers[i] = (np.concatenate([w, extra.astype(np.float32)], 1),
                     np.concatenate([b, np.zeros(new - old, np.float32)]))
        w2, b2 = layers[i + 1]  # the new units feed nothing yet
        layers[i + 1] = (np.concatenate([w2, np.zeros((new - old, w2.shape[1]), np.float32)]), b2)
    pad = sizes[-1] - policy.feat_w.shape[0]
    feat_w = np.concatenate([policy.feat_w, np.zeros((pad, policy.feat_w.shape[1]), np.float32)])
    head = None
    if policy.head is not None:
        head = dict(policy.head)
        h = head["head_h"]
        head["head_h"] = np.concatenate([h, np.zeros((pad, h.shape[1]), np.float32)])
    return ResidualPolicy(layers, policy.activation, feat_w, policy.feat_b, head)


def main(argv: list[str]) -> None:
    src, *sizes, out = argv
    directory, _card, policy = load_checkpoint(src)
    assert isinstance(policy, ResidualPolicy)
    wide = widen(policy, [int(s) for s in sizes])
    shutil.copytree(directory, out)
    wide.save(Path(out) / "policy.npz")
    print(f"{out}: hidden {[w.shape[1] for w, _ in wide.layers[:-1]]}")


if __name__ == "__main__":
    main(sys.argv[1:])
