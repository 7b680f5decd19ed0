"""A run's learning curve over learner steps and over wall time, side by side.

    python -m allfives_train.benchmarks.curve runs/fast_all_fives_2p docs/images/fast_2p_curve.png

Reads the run's ``eval.jsonl`` (duplicate-deal win rates written during training) and draws
the win rate against each evaluation opponent with its 95% interval, once against learner
steps and once against wall-clock minutes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def read_history(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "eval.jsonl"
    if not path.is_file():
        raise ValueError(f"{run_dir}: no eval.jsonl (not a training run directory)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plot_two(history: list[dict[str, Any]], path: Path, title: str) -> None:
    """Win rate vs steps (left) and vs wall minutes (right), one line per opponent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), dpi=100, sharey=True)
    names = list(history[-1]["results"]) if history else []
    xs_by = {"learner steps (millions)": lambda h: h["steps"] / 1e6,
             "wall time (minutes)": lambda h: h["wall_time_s"] / 60}
    for ax, (label, x_of) in zip(axes, xs_by.items()):
        for name in names:
            pts = [(x_of(h), h["results"][name]) for h in history if name in h["results"]]
            xs = [x for x, _ in pts]
            ax.plot(xs, [r["win_rate"] for _, r in pts], marker="o", label=f"vs {name}")
            ax.fill_between(xs, [r["ci95"][0] for _, r in pts],
                            [r["ci95"][1] for _, r in pts], alpha=0.2)
        ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
        ax.set_xlabel(label)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win rate (duplicate deals, 95% interval)")
    axes[0].legend(loc="best", fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m allfives_train.benchmarks.curve",
                                     description=__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    try:
        history = read_history(args.run_dir)
    except ValueError as exc:
        parser.exit(2, f"{exc}\n")
    plot_two(history, args.out, args.title or f"{args.run_dir.name}: win rate while training")
    print(f"wrote {args.out} ({len(history)} evaluations)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
