"""Does the solved end of the hand side with the referee where the network and `search`
differ? (issue 11; experiments/log.md, "The end of a hand, solved (fourteenth session)")

Reads what ``experiments/dmc/ply3/disagreements.py OUT.json ...`` wrote (``OUT.json`` and
``OUT.json.views.pkl``; several files may be given) and, for positions with at most 2 tiles
left to draw and at most ``CAP`` tiles in hands and boneyard (up to 120 per count of tiles
left to draw), solves both moves (:func:`solve.move_values`, 8 sampled worlds) and compares
the difference with the referee's. Run from the repository root:

    PYTHONPATH=. python experiments/dmc/endgame/probe.py d4401.json d4402.json d4403.json d4404.json
"""

from __future__ import annotations

import sys
import time

import numpy as np

from experiments.dmc.endgame.solve import move_values
from experiments.dmc.ply3.disagreements import load

CAP = 14


def main(paths: list[str]) -> None:
    rows, views = load(paths)
    rng = np.random.default_rng(0)
    print("left  positions  ms/pos  solver: differs, sides with referee, corr; "
          "prefers network, prefers search")
    for left in (0, 1, 2):
        sel = [i for i, r in enumerate(rows) if r["boneyard"] == left
               and views[i].hand.bit_count() + views[i].unseen.bit_count() <= CAP][:120]
        start, d = time.time(), []
        for i in sel:
            values = move_values(views[i], [rows[i]["net"], rows[i]["search"]], 8, rng)
            assert values is not None
            d.append((values[0] - values[1], rows[i]["va"] - rows[i]["vb"]))
        x = np.array(d)
        nz = x[:, 0] != 0
        same = np.mean(np.sign(x[nz, 0]) == np.sign(x[nz, 1]))
        print(f"{left:4d} {len(sel):10d} {1000 * (time.time() - start) / len(sel):7.0f}  "
              f"{nz.sum():4d} {same:6.1%} {np.corrcoef(x[:, 0], x[:, 1])[0, 1]:+.2f}  "
              f"{np.mean(x[:, 0] > 0):6.1%} {np.mean(x[:, 0] < 0):6.1%}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: probe.py OUT.json [OUT.json ...] (written by disagreements.py)")
    main(sys.argv[1:])
