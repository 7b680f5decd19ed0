"""Which one-move terms go with the referee's preference where the network and `search`
differ? (issue 11; experiments/log.md, "A third ply in the network")

Reads what ``disagreements.py OUT.json ...`` wrote (``OUT.json`` and ``OUT.json.views.pkl``)
and, for each candidate term, correlates (network's move minus `search`'s) with the
referee's preference, by tiles left to draw. Run from the repository root:

    PYTHONPATH=. python experiments/dmc/ply3/disagreements.py d32.json \\
        --agents probe search --games 200 --seed 32 --workers 1
    PYTHONPATH=. python experiments/dmc/ply3/candidates.py d32.json
"""

from __future__ import annotations

import sys

import numpy as np

from allfives_agents.features.action_features import FeatureContext, plies
from allfives_env.game.layout import Layout, layout_after
from allfives_env.game.tiles import N_ENDS, SUIT_MASK, TILE_PIPS, mask_to_tiles
from allfives_env.game.view import SeatView
from experiments.dmc.ply3.disagreements import load

TERMS = ("mobility", "other_match", "can_next", "rest_pips", "ply3")


def playable(layout: Layout, tiles: int) -> int:
    """The tiles of ``tiles`` that match an open end of ``layout``."""
    m = 0
    for i in range(layout.n_arms):
        m |= tiles & SUIT_MASK[layout.ends[i]]
    return m


def terms(view: SeatView, a: int) -> dict[str, float] | None:
    """The candidate terms of move ``a`` (None when it empties the hand)."""
    ctx = FeatureContext(view)
    rest = view.hand & ~(1 << (a // N_ENDS))
    if not rest:
        return None
    layout = layout_after(view, a, view.rules.spinner)
    _, p3, can = plies(ctx, layout, rest)
    return {"mobility": playable(layout, rest).bit_count() / 7,
            "other_match": playable(layout, ctx.allowed).bit_count() / 7,
            "can_next": can, "rest_pips": sum(TILE_PIPS[t] for t in mask_to_tiles(rest)) / 60,
            "ply3": -p3 / 20}


def main(path: str) -> None:
    rows, views = load([path])
    d, diffs, draw = [], [], []
    for r, v in zip(rows, views):
        ta, tb = terms(v, r["net"]), terms(v, r["search"])
        if ta is None or tb is None:
            continue
        d.append(r["va"] - r["vb"])
        diffs.append([ta[k] - tb[k] for k in TERMS])
        draw.append(v.drawable)
    pref, x, left = np.array(d), np.array(diffs), np.array(draw)
    for name, sel in (("all", left >= 0), ("0-3 left to draw", left < 4),
                      ("4-7", (left >= 4) & (left < 8)), ("8+", left >= 8)):
        print(f"{name}: {sel.sum()} positions, referee's preference {pref[sel].mean():+.2f}")
        for j, k in enumerate(TERMS):
            col = x[sel, j]
            c = np.corrcoef(col, pref[sel])[0, 1] if col.std() > 0 else 0.0
            print(f"  {k:12s} correlation {c:+.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: candidates.py OUT.json (written by disagreements.py)")
    main(sys.argv[1])
