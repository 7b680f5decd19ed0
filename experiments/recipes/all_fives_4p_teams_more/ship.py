"""Ship the candidate of rule.md here once decide.py says REPLACE (reproduced/ship.py's steps:
the shipped folder moves to experiments/checkpoints/, the candidate takes its place with its
card, fresh-seed files and round robin; the registry rows are printed). From the repository
root, after levels.sh:

    PYTHONPATH=. .venv/bin/python experiments/recipes/all_fives_4p_teams_more/ship.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "reproduced")]
import ship  # noqa: E402

RULE = ("the rule `experiments/recipes/all_fives_4p_teams_more/rule.md`, written before the "
        "games of fresh seed 20261258: not measurably weaker than the model it replaces "
        "against a `heuristic` team and a `search` team (the interval of the difference "
        "reaches 0) and head to head (the interval reaches 50%)")
VERDICT = ("`PYTHONPATH=. .venv/bin/python experiments/recipes/all_fives_4p_teams_more/decide.py` "
           "prints every interval; the games: `bash experiments/recipes/all_fives_4p_teams_more/"
           "eval.sh RUN_DIR`.")
NOTE = ("the run was `allfives train --config experiments/recipes/all_fives_4p_teams_more/"
        "recipe.yaml` (the stages of `configs/recipes/all_fives_4p_teams.yaml`, then a lab "
        "candidate) continuing the recipe's second run: its `ppo` and `labels256` stages and "
        "the first 28 label shards of `distill` are that run's, which the same seeds write "
        "again (tests/test_recipe.py runs a recipe twice from nothing and gets the same "
        "network bit for bit); the times are that run's stages plus this one's")


def edit(card: dict) -> None:
    card["recipe"]["command"] = "allfives train --config configs/recipes/all_fives_4p_teams.yaml"
    card["note"] = NOTE


if __name__ == "__main__":
    here = Path("experiments/recipes/all_fives_4p_teams_more")
    sys.exit(ship.ship("all_fives_4p_teams", "recipe3_all_fives_4p_teams", [here],
                       here / "ship", RULE, VERDICT, edit))
