"""Pool one pairing's ``allfives eval --json`` files over several seeds into one figure.

From each file the pairing against the opponent ``VS`` is taken (its first agent may carry a
model's former or run-directory name: the names are printed, for the reader to check); the
files must share the rules and have distinct seeds, whose deals are independent, so the games
add up. Prints the pooled win rate of the first agent (draws count half), its 95% Wilson
interval, the games and the seeds, in the shape of a ``checkpoints/models.yaml`` strength
row. Usage, from the repository root:

    PYTHONPATH=. python experiments/strength/pool.py VS FILE.json [FILE.json ...]
"""

from __future__ import annotations

import json
import sys

from allfives_agents.evaluation.stats import wilson


def pool(vs: str, files: list[str]) -> dict:
    names, rules, seeds = [], set(), []
    games = wins = draws = 0
    for name in files:
        table = json.load(open(name))
        (p,) = [p for p in table["pairings"] if p["b"] == vs]
        names.append(p["a"])
        rules.add(json.dumps(table["rules"], sort_keys=True))
        seeds.append(table["seed"])
        games, wins, draws = games + p["games"], wins + p["wins"], draws + p["draws"]
    if len(rules) != 1 or len(set(seeds)) != len(seeds):
        raise SystemExit("pool: the files must share one rule set and have distinct seeds")
    rate = (wins + draws / 2) / games
    lo, hi = wilson(rate, games)
    return {"agents": sorted(set(names)), "vs": vs, "win_rate": round(rate, 4),
            "ci95": [round(lo, 3), round(hi, 3)], "games": games, "seeds": sorted(seeds)}


if __name__ == "__main__":
    print(json.dumps(pool(sys.argv[1], sys.argv[2:])))
