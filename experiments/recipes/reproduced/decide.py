"""The verdict of rule.md: for each setting, the candidate against its control, on seed 20261256
alone and pooled with every earlier fresh seed of the comparison. Usage, from the repository root:

    PYTHONPATH=. .venv/bin/python experiments/recipes/reproduced/decide.py [--json OUT]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from allfives_agents.evaluation.stats import wilson

RECIPES = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
#: setting -> the directories of its earlier fresh-seed comparisons (rule.md's table)
EARLIER = {
    "all_fives_2p": ["all_fives_2p_batched", "all_fives_2p_batched/confirm"],
    "all_fives_3p": ["all_fives_3p", "all_fives_3p/confirm"],
    "all_fives_4p_teams": ["all_fives_4p_teams_batched"],
    "five_up_2p": ["five_up_2p"],
}
BOTS = ("heuristic", "search")


def comparison_dirs(setting: str) -> list[Path]:
    """Every fresh-seed comparison of the setting's candidate and control: the earlier ones,
    then seed 20261256's."""
    return [RECIPES / d for d in EARLIER[setting]] + [HERE / setting]


def counts(path: Path) -> tuple[float, int, int]:
    """(points, games, seed) of the file's one pairing: wins plus half the draws."""
    table = json.loads(path.read_text())
    (p,) = table["pairings"]
    return p["wins"] + p["draws"] / 2, p["games"], table["seed"]


def pooled(dirs: list[Path], name: str) -> tuple[float, int, list[int]]:
    points = games = 0
    seeds = []
    for d in dirs:
        w, n, s = counts(d / f"{name}.json")
        points, games = points + w, games + n
        seeds.append(s)
    if len(set(seeds)) != len(seeds):
        raise SystemExit(f"decide: {name} repeats a seed: {seeds}")
    return points / games, games, seeds


def newcombe(p1: float, n1: int, p2: float, n2: int) -> tuple[float, float]:
    """95% interval of p1 - p2 from the two Wilson intervals (Newcombe's hybrid score)."""
    l1, u1 = wilson(p1, n1)
    l2, u2 = wilson(p2, n2)
    d = p1 - p2
    return d - math.hypot(p1 - l1, u2 - p2), d + math.hypot(u1 - p1, p2 - l2)


def judge(dirs: list[Path]) -> dict:
    rate, n, seeds = pooled(dirs, "h2h")
    lo, hi = wilson(rate, n)
    out = {"seeds": seeds, "h2h": {"rate": rate, "games": n, "ci95": [lo, hi], "ok": hi >= 0.5}}
    for bot in BOTS:
        pc, nc, _ = pooled(dirs, bot)
        ps, ns, _ = pooled(dirs, f"control_{bot}")
        dlo, dhi = newcombe(pc, nc, ps, ns)
        out[bot] = {"candidate": pc, "control": ps, "games": nc, "diff": pc - ps,
                    "diff_ci95": [dlo, dhi], "ok": dhi >= 0}
    out["ok"] = all(out[k]["ok"] for k in ("h2h", *BOTS))
    return out


def show(setting: str, label: str, v: dict) -> None:
    h = v["h2h"]
    print(f"{setting:20} {label:8} seeds {','.join(map(str, v['seeds']))}")
    print(f"  head to head {100 * h['rate']:.1f}% [{100 * h['ci95'][0]:.1f}, "
          f"{100 * h['ci95'][1]:.1f}] of {h['games']}: {'ok' if h['ok'] else 'FAILS'}")
    for bot in BOTS:
        b = v[bot]
        print(f"  vs {bot:9} {100 * b['candidate']:.1f}% vs {100 * b['control']:.1f}% of "
              f"{b['games']}, difference {100 * b['diff']:+.1f} [{100 * b['diff_ci95'][0]:+.1f}, "
              f"{100 * b['diff_ci95'][1]:+.1f}]: {'ok' if b['ok'] else 'FAILS'}")


def main(argv: list[str]) -> int:
    verdicts = {}
    for setting in EARLIER:
        v = {"fresh": judge([HERE / setting]), "pooled": judge(comparison_dirs(setting))}
        v["replace"] = v["fresh"]["ok"] and v["pooled"]["ok"]
        for label in ("fresh", "pooled"):
            show(setting, label, v[label])
        print(f"  => {'REPLACE' if v['replace'] else 'keep the shipped model'}\n")
        verdicts[setting] = v
    if argv[:1] == ["--json"]:
        Path(argv[1]).write_text(json.dumps(verdicts, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
