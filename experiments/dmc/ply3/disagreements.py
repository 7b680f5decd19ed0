"""Where do `dmc2_all_fives_2p` and `search` choose differently, and what does that cost?
(issue 11; experiments/log.md, "A third ply in the network")

The agent ``probe`` plays `dmc2_all_fives_2p`'s move. At every decision with two or more legal
moves it also asks `search` (its own seed) and, when the two differ, lets a stronger
referee, ``search:net=experiments/checkpoints/dmc2_all_fives_2p,sims=512`` (the network inside the
search), score both moves on the same 256 sampled worlds. Every such position goes to
``OUT`` (JSON, one row each: both moves, the referee's means in points, both moves' 13
features, hand sizes, tiles left to draw) and the seat views to ``OUT.views.pkl`` (for
``candidates.py``, ``experiments/dmc/endgame/probe.py`` and ``experiments/features/draw_probe.py``,
which read them with :func:`load`). Run from the repository root; the summary by
tiles left to draw, hand size and the other seat's hand size is printed at the end:

    PYTHONPATH=. python experiments/dmc/ply3/disagreements.py OUT.json \\
        --agents probe search --games 300 --seed 31 --workers 1

``PROBE_NET=experiments/checkpoints/dmc4_all_fives_2p`` puts another network in both the ``probe`` and
the referee (thirteenth session: "Another seed, a stronger pool, ..." in experiments/log.md).

The referee shares `search`'s way of playing out a world, so it leans towards `search`'s
moves; read the split across positions, not the overall sum.
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import sys
from typing import Any

import numpy as np

from allfives.cli import main
from allfives_agents.base import Agent, Obs, make_agent, register
from allfives_agents.features.action_features import N_FEATURES, action_features
from allfives_agents.planning.netsearch import NetSearchAgent
from allfives_env.game.view import SeatView

NET = os.environ.get("PROBE_NET", "experiments/checkpoints/dmc2_all_fives_2p")
ROWS: list[dict[str, Any]] = []
VIEWS: list[SeatView] = []


@register("probe")
class Probe(Agent):
    """Plays the network's move; records where `search` would differ (see the module)."""

    needs_obs = True

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        super().__init__(seed)
        self.net = make_agent(f"ckpt:{NET}", seed=seed)
        self.search = make_agent("search", seed=seed)
        self.referee = NetSearchAgent(seed=seed, net=NET, sims=512)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        for agent in (self.net, self.search, self.referee):
            agent.reset(seed)

    def act(self, obs: Obs, view: SeatView) -> int:
        a = self.net.act(obs, view)
        if len(view.legal) < 2:
            return a
        b = self.search.act(obs, view)
        if a != b:
            self.referee._check(view)
            va, vb = self.referee.rollout_means(view, [a, b], 256)
            f = action_features(view, N_FEATURES)
            VIEWS.append(view)
            ROWS.append({"net": a, "search": b, "va": va, "vb": vb, "fa": f[a].tolist(),
                         "fb": f[b].tolist(), "hand": view.hand.bit_count(),
                         "other": sum(view.hand_sizes) - view.hand.bit_count(),
                         "drawable": view.drawable})
        return a


def summary(rows: list[dict[str, Any]]) -> str:
    """The referee's preference (network minus `search`, points) split three ways."""
    d = np.array([r["va"] - r["vb"] for r in rows])
    lines = [f"{len(rows)} positions where they differ; the referee prefers the network's "
             f"move in {np.mean(d > 0):.1%}, by {d.mean():+.2f} points on average"]
    draw = ("0-3", "4-7", "8+")
    for name, key in (("tiles left to draw", lambda r: draw[min(r["drawable"] // 4, 2)]),
                      ("own hand", lambda r: str(min(r["hand"], 9))),
                      ("other hand", lambda r: str(min(r["other"], 9)))):
        keys = np.array([key(r) for r in rows])
        lines.append(f"by {name} (bucket: positions, network's move preferred, mean, sum):")
        for k in sorted(set(keys.tolist()), key=lambda x: int(x.split("-")[0].rstrip("+"))):
            s = d[keys == k]
            lines.append(f"  {k:>3}: {len(s):5d} {np.mean(s > 0):6.1%} {s.mean():+7.2f} "
                         f"{s.sum():+9.1f}")
    return "\n".join(lines)


def load(paths: list[str]) -> tuple[list[dict[str, Any]], list[SeatView]]:
    """The rows and seat views that runs of this script wrote to ``paths`` (``OUT.json``),
    in order."""
    rows: list[dict[str, Any]] = []
    views: list[SeatView] = []
    for path in paths:
        with open(path) as f:
            rows += json.load(f)
        with open(path + ".views.pkl", "rb") as f:
            views += pickle.load(f)
    return rows, views


def _save(path: str) -> None:
    with open(path, "w") as f:
        json.dump(ROWS, f)
    with open(path + ".views.pkl", "wb") as f:
        pickle.dump(VIEWS, f)
    if ROWS:
        print(summary(ROWS))


if __name__ == "__main__":  # allfives eval itself, with the agent above registered
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        raise SystemExit("usage: disagreements.py OUT.json [allfives eval arguments]")
    atexit.register(_save, sys.argv.pop(1))
    raise SystemExit(main(["eval", *sys.argv[1:]]))
