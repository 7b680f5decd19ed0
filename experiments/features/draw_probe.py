"""Does ``draw_reply`` go with the referee's preference? (issue 11; experiments/log.md, "The
reward, and the draw after a block (fifteenth session)")

Reads the disagreement files of ``experiments/dmc/ply3/disagreements.py`` (``OUT.json`` and
``OUT.json.views.pkl``: positions where ``dmc4_all_fives_2p`` and ``search`` chose
differently, the referee's value of each move and the seat's view) and prints, per count of
tiles left to draw: the correlation of the referee's preference (the network's move minus
``search``'s) with the difference of ``draw_reply`` between the two moves, and the share of
that preference a least-squares fit explains on the 13 features and on the 13 plus
``draw_reply``. Run from the repository root:

    PYTHONPATH=. python experiments/features/draw_probe.py d4401.json d4402.json d4403.json d4404.json
"""

from __future__ import annotations

import sys

import numpy as np

from allfives_agents.features.action_features import FEATURES, action_features
from experiments.dmc.ply3.disagreements import load

COL = FEATURES.index("draw_reply")
GROUPS = (("all", 0, 10), ("10 (nobody has drawn)", 10, 10), ("8-9", 8, 9), ("4-7", 4, 7),
          ("1-3", 1, 3))


def differences(paths: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Preference, draw_reply difference, the 13 features' differences, tiles left to draw."""
    pref, draw, feats, left = [], [], [], []
    rows, views = load(paths)
    for row, view in zip(rows, views, strict=True):
        f14 = action_features(view)
        pref.append(row["va"] - row["vb"])
        draw.append(f14[row["net"], COL] - f14[row["search"], COL])
        feats.append(np.subtract(row["fa"], row["fb"]))
        left.append(row["boneyard"])
    return np.array(pref), np.array(draw), np.array(feats), np.array(left)


def explained(x: np.ndarray, y: np.ndarray) -> float:
    """R^2 of the least-squares fit of ``y`` on ``x`` and a constant."""
    x = np.c_[x, np.ones(len(y))]
    resid = y - x @ np.linalg.lstsq(x, y, rcond=None)[0]
    return float(1 - (resid ** 2).sum() / ((y - y.mean()) ** 2).sum())


def main(paths: list[str]) -> None:
    pref, draw, feats, left = differences(paths)
    top = max(abs(np.corrcoef(feats[:, i], pref)[0, 1]) for i in range(feats.shape[1])
              if feats[:, i].std() > 0)
    print(f"{len(pref)} disagreements; the 13 features' largest |correlation|: {top:.3f}")
    for name, lo, hi in GROUPS:
        m = (left >= lo) & (left <= hi)
        c = np.corrcoef(draw[m], pref[m])[0, 1]
        print(f"{name:>22}: n={m.sum():6d} draw_reply correlation {c:+.3f}; explained by the "
              f"13 features {explained(feats[m], pref[m]):.3f}, with draw_reply "
              f"{explained(np.c_[feats[m], draw[m]], pref[m]):.3f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: draw_probe.py DISAGREEMENTS.json [...]")
    main(sys.argv[1:])
