"""Print an ``allfives eval --json`` (or ``merge.py``) table as the markdown cross table of
docs/bots-and-eval.md: the row agent's win rate against each column with its 95% Wilson
interval, agents ordered by Elo, high to low. Usage, from the repository root:

    PYTHONPATH=. python experiments/strength/table.py experiments/strength/all_fives_2p_recipe.json
"""

from __future__ import annotations

import json
import sys

from allfives_agents.evaluation.stats import wilson


def cross_table(table: dict) -> str:
    ids = [a["id"] for a in sorted(table["agents"], key=lambda a: -a["elo"])]
    elo = {a["id"]: a["elo"] for a in table["agents"]}
    score: dict[tuple[str, str], tuple[float, int]] = {}
    for p in table["pairings"]:
        won = p["wins"] + p["draws"] / 2
        score[p["a"], p["b"]] = won, p["games"]
        score[p["b"], p["a"]] = p["games"] - won, p["games"]
    lines = ["| row vs column | " + " | ".join(f"`{i}`" for i in ids) + " | Elo |",
             "|" + "---|" * (len(ids) + 1) + "---:|"]
    for r in ids:
        cells = []
        for c in ids:
            if (r, c) not in score:
                cells.append("")
                continue
            won, n = score[r, c]
            lo, hi = wilson(won / n, n)
            cells.append(f"{100 * won / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]")
        lines.append(f"| `{r}` | " + " | ".join(cells) + f" | {elo[r]:.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(cross_table(json.load(open(sys.argv[1]))))
