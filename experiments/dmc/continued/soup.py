"""Average the weights of same-shaped action_features checkpoints (a "model soup") into one
policy.npz: ``python experiments/dmc/continued/soup.py OUT_DIR CKPT_DIR...`` (OUT_DIR gets the
first checkpoint's card.json and config.yaml, so ``ckpt:OUT_DIR`` loads)."""

import shutil
import sys
from pathlib import Path

import numpy as np

out, members = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
out.mkdir(parents=True, exist_ok=True)
for name in ("card.json", "config.yaml"):
    shutil.copy(members[0] / name, out / name)
loaded = [np.load(m / "policy.npz") for m in members]
soup = {k: (np.mean([d[k] for d in loaded], axis=0).astype(v.dtype) if v.dtype.kind == "f"
            else v) for k, v in ((k, loaded[0][k]) for k in loaded[0].files)}
np.savez(out / "policy.npz", **soup)
