"""Evaluate a run's snapshots: ``python -m allfives_train.baselines.evalpoints RUN_DIR``.

Each snapshot of ``RUN_DIR/done.json`` plays ``--games`` duplicate games against ``greedy``
and against ``heuristic`` through ``allfives.evaluate`` (the deals of ``allfives eval
--seed 20261312``: the same for every snapshot of every run; 95% Wilson intervals), one
thread. The results go to ``RUN_DIR/eval.json``, written after each snapshot, so a rerun
evaluates only the snapshots it lacks.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from allfives_train.baselines.runner import EVAL_SEED, write_json

AGAINST = ("greedy", "heuristic")


def evaluate_points(run_dir: Path, games: int, seed: int = EVAL_SEED) -> dict[str, Any]:
    """The results of every snapshot of the run, by ``k``."""
    import torch

    from allfives_agents.public import evaluate

    torch.set_num_threads(1)
    done = json.loads((run_dir / "done.json").read_text())
    path = run_dir / "eval.json"
    results: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    for point in done["points"]:
        key = str(point["k"])
        if key in results and results[key]["games"] == games:
            continue
        out = evaluate(point["agent"], against=list(AGAINST), games=games, seed=seed)
        results[key] = {"games": games, "seed": seed, "results": {
            opp: {"win_rate": r["win_rate"], "ci95": list(r["ci95"]), "games": r["games"]}
            for opp, r in out["results"].items()}}
        write_json(path, results)
    return results


def main(argv: list[str] | None = None) -> int:
    """Evaluate one run folder."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--games", type=int, default=100)
    args = p.parse_args(argv)
    evaluate_points(args.run_dir, args.games)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
