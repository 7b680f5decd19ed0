"""Rows, the markdown table and the figures of the reference curves.

A row is one evaluated snapshot: ``learner``, ``view``, ``seed``, ``k`` (the snapshot at
``k / K`` of the budget), ``steps`` (the learner's env steps; RLlib's table env counts every
seat's moves), ``cpu_s`` and ``wall_s`` (since the learner's launch), and per opponent the
win rate, its 95% Wilson interval and the games.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from allfives_train.baselines.learners import LABELS, LEARNERS, VIEWS

OPPONENTS = ("greedy", "heuristic")


def collect(run_dirs: Iterable[Path]) -> list[dict[str, Any]]:
    """The rows of the finished, evaluated runs among ``run_dirs``."""
    rows: list[dict[str, Any]] = []
    for done_path in [d / "done.json" for d in run_dirs if (d / "done.json").is_file()]:
        done = json.loads(done_path.read_text())
        eval_path = done_path.with_name("eval.json")
        evals = json.loads(eval_path.read_text()) if eval_path.is_file() else {}
        for point in done["points"]:
            result = evals.get(str(point["k"]))
            if result is None:
                continue
            row = {"learner": done["learner"], "view": done["view"], "seed": done["seed"],
                   "k": point["k"], "steps": int(point["steps"]),
                   "cpu_s": float(point["cpu_s"]), "wall_s": float(point["wall_s"])}
            for opp in OPPONENTS:
                r = result["results"][opp]
                row[opp] = r["win_rate"]
                row[f"{opp}_ci95"] = r["ci95"]
                row[f"{opp}_games"] = r["games"]
            rows.append(row)
    return rows


Series = dict[tuple[str, str], dict[int, list[dict[str, Any]]]]


def series(rows: Iterable[dict[str, Any]]) -> Series:
    """Rows grouped by (learner, view), then seed, each seed's rows in snapshot order."""
    out: dict[tuple[str, str], dict[int, list[dict[str, Any]]]] = defaultdict(dict)
    for row in rows:
        out[row["learner"], row["view"]].setdefault(row["seed"], []).append(row)
    for by_seed in out.values():
        for seed_rows in by_seed.values():
            seed_rows.sort(key=lambda r: r["k"])
    order = {(lr, v): (LEARNERS.index(lr), VIEWS.index(v)) for lr, v in out}
    return dict(sorted(out.items(), key=lambda item: order[item[0]]))


def mean_curve(by_seed: dict[int, list[dict[str, Any]]], x: str, y: str
               ) -> tuple[list[float], list[float]]:
    """The mean over seeds of ``x`` and ``y`` at each snapshot index ``k``."""
    at: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for seed_rows in by_seed.values():
        for row in seed_rows:
            at[row["k"]].append(row)
    ks = sorted(at)
    return ([sum(r[x] for r in at[k]) / len(at[k]) for k in ks],
            [sum(r[y] for r in at[k]) / len(at[k]) for k in ks])


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def average(rows: list[dict[str, Any]], key: str) -> float:
    return sum(r[key] for r in rows) / len(rows)


def spread(last: list[dict[str, Any]], key: str) -> str:
    """The mean win rate over seeds, with the seeds' range (one seed: its 95% interval)."""
    if len(last) == 1:
        lo, hi = last[0][f"{key}_ci95"]
        return f"{pct(last[0][key])} [{pct(lo)}, {pct(hi)}]"
    lo, hi = min(r[key] for r in last), max(r[key] for r in last)
    return f"{pct(average(last, key))} (seeds {pct(lo)}-{pct(hi)})"


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table: per learner and view, the last snapshot averaged over seeds."""
    lines = ["| learner | view | seeds | env steps | CPU min | wall min | vs `greedy` | "
             "vs `heuristic` | best snapshot vs `heuristic` |",
             "|---|---|---:|---:|---:|---:|---|---|---|"]
    for (learner, view), by_seed in series(rows).items():
        last = [seed_rows[-1] for seed_rows in by_seed.values()]
        _, best_y = mean_curve(by_seed, "cpu_s", "heuristic")
        lines.append(f"| {LABELS.get(learner, learner)} | `{view}` | {len(last)} | "
                     f"{average(last, 'steps'):,.0f} | {average(last, 'cpu_s') / 60:.2f} | "
                     f"{average(last, 'wall_s') / 60:.2f} | {spread(last, 'greedy')} | "
                     f"{spread(last, 'heuristic')} | {pct(max(best_y))} |")
    return "\n".join(lines) + "\n"


#: The figures, by the row field on their x axis.
FIGURES = {"cpu_s": "curves_cpu.png", "wall_s": "curves_wall.png", "steps": "curves_steps.png"}
XLABELS = {"cpu_s": "CPU-minutes of the learner's process tree",
           "wall_s": "wall-clock minutes (on this machine, at its load)",
           "steps": "env steps (log scale)"}


def plot(rows: list[dict[str, Any]], x: str, path: Path, title: str) -> Path:
    """Win rate against each opponent (one panel each) against ``x`` (``cpu_s`` and
    ``wall_s``: plotted in minutes; ``steps``: log scale): each seed faint, the mean over
    seeds bold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(OPPONENTS), figsize=(12, 4.6), sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = {"raw": "-", "facts": "--", "heuristic": ":"}
    scale = 1.0 if x == "steps" else 1 / 60
    for ax, opp in zip(axes, OPPONENTS, strict=True):
        for (learner, view), by_seed in series(rows).items():
            color = colors[LEARNERS.index(learner) % len(colors)]
            for seed_rows in by_seed.values():
                ax.plot([r[x] * scale for r in seed_rows], [r[opp] for r in seed_rows],
                        color=color, ls=styles[view], alpha=0.25, lw=1)
            mx, my = mean_curve(by_seed, x, opp)
            ax.plot([v * scale for v in mx], my, color=color, ls=styles[view], lw=2,
                    marker="o", ms=3, label=f"{learner} / {view}")
        ax.set_title(f"against {opp}")
        ax.set_xlabel(XLABELS[x])
        if x == "steps":
            ax.set_xscale("log")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win rate")
    axes[0].set_ylim(0, 1)
    axes[-1].legend(fontsize=8, loc="upper left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def check_rows(rows: list[dict[str, Any]]) -> list[str]:
    """What is inconsistent in ``rows`` (empty: nothing): rates outside [0, 1], steps or CPU
    time that do not increase along a seed's curve."""
    problems = []
    for (learner, view), by_seed in series(rows).items():
        for seed, seed_rows in by_seed.items():
            for a, b in zip(seed_rows, seed_rows[1:], strict=False):
                if b["steps"] < a["steps"] or b["cpu_s"] < a["cpu_s"]:
                    problems.append(f"{learner}/{view}/seed {seed}: snapshot {b['k']} is "
                                    f"not after snapshot {a['k']}")
            for row in seed_rows:
                for opp in OPPONENTS:
                    if not 0.0 <= row[opp] <= 1.0 or math.isnan(row[opp]):
                        problems.append(f"{learner}/{view}/seed {seed}: rate {row[opp]}")
    return problems
