"""Merge ``allfives eval --json`` files of one seed into one round-robin table with Elo.

Each pairing of ``allfives eval`` plays the same deals (``game_seed(seed, deal)``) whatever
other agents the command lists, so a table of N agents plus the pairings of one more agent
against each of them is the table that the round robin of all N + 1 would give; this script
joins them and fits Elo over the whole (``allfives_agents.evaluation.stats.elo_ratings``), as ``allfives eval``
does. Usage, from the repository root:

    PYTHONPATH=. python experiments/strength/merge.py OUT.json IN.json [IN.json ...]
"""

from __future__ import annotations

import json
import sys
from typing import Any

from allfives_agents.evaluation.stats import elo_ratings


def merge(files: list[str]) -> dict[str, Any]:
    tables = [json.load(open(f)) for f in files]
    if len({t["seed"] for t in tables}) != 1 or len({json.dumps(t["rules"]) for t in tables}) != 1:
        raise SystemExit("merge: the files must share one seed and one rule set")
    pairings: dict[tuple[str, str], dict[str, Any]] = {}
    for t in tables:
        for p in t["pairings"]:
            pairings.setdefault((p["a"], p["b"]), p)
    ids = list(dict.fromkeys(i for key in pairings for i in key))
    index = {i: k for k, i in enumerate(ids)}
    results = {(index[a], index[b]): (p["wins"] + p["draws"] / 2, p["games"])
               for (a, b), p in pairings.items()}
    elo = elo_ratings(len(ids), results)
    per_agent: dict[str, list[dict[str, Any]]] = {}
    for t in tables:
        for agent in t["agents"]:
            per_agent.setdefault(agent["id"], []).append(agent)
    agents = []
    for i in ids:
        k = index[i]
        score = sum(v[0] for (a, _b), v in results.items() if a == k) + \
            sum(v[1] - v[0] for (_a, b), v in results.items() if b == k)
        played = sum(v[1] for pair, v in results.items() if k in pair)
        moves = sum(a["moves"] for a in per_agent[i])
        ms = sum(a["ms_per_move"] * a["moves"] for a in per_agent[i]) / max(moves, 1)
        agents.append({"id": i, "elo": elo[index[i]], "games": played,
                       "win_rate": score / played, "ms_per_move": ms,
                       "max_ms_per_move": max(a["max_ms_per_move"] for a in per_agent[i]),
                       "moves": moves})
    out = dict(tables[0])
    out.update(agents=agents, pairings=list(pairings.values()), merged_from=files)
    return out


if __name__ == "__main__":
    merged = merge(sys.argv[2:])
    with open(sys.argv[1], "w") as f:
        json.dump(merged, f, indent=1)
    for a in sorted(merged["agents"], key=lambda a: -a["elo"]):
        print(f"{a['id']:40s} Elo {a['elo']:6.0f}  win rate {100 * a['win_rate']:.1f}%")
