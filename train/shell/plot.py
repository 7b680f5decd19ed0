"""The learning curve PNG: win rate against each evaluation opponent, with its interval."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from allfives_env.game.rules import Rules
from allfives_train.shell import manifest


def plot_curve(history: list[dict[str, Any]], path: Path, rules: Rules) -> None:
    """Write ``path`` (PNG) from the evaluation history (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    names = list(history[-1]["results"]) if history else []
    for name in names:
        pts = [(h["steps"], h["results"][name]) for h in history if name in h["results"]]
        xs = [s for s, _ in pts]
        ax.plot(xs, [r["win_rate"] for _, r in pts], marker="o", label=f"vs {name}")
        ax.fill_between(xs, [r["ci95"][0] for _, r in pts], [r["ci95"][1] for _, r in pts],
                        alpha=0.2)
    ax.axhline(1.0 / rules.n_sides, color="grey", linestyle="--", linewidth=1,
               label="even")
    table = f"{rules.players} seats" + (", teams" if rules.teams else "")
    ax.set_title(f"{rules.preset}, {table}: duplicate-deal win rate (95% interval)")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    with manifest.temporary(tmp):
        with open(tmp, "wb") as f:
            fig.savefig(f, format="png")
        plt.close(fig)
        manifest.note_pending(path, tmp)
        tmp.replace(path)
