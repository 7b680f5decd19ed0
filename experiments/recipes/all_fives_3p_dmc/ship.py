"""Ship the candidate of rule.md here once verdict.py says REPLACE on both seeds
(reproduced/ship.py's steps: the shipped folder moves to experiments/checkpoints/ under its
former name, whose copy there, the same weights with a shorter card, it replaces; the candidate
takes its place with its card, fresh-seed files and round robin; the registry rows are
printed). From the repository root, after levels.sh:

    PYTHONPATH=. .venv/bin/python experiments/recipes/all_fives_3p_dmc/ship.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "reproduced")]
import ship  # noqa: E402

SETTING, CANDIDATE, FOLDER = "all_fives_3p", "recipe_dmc_all_fives_3p", "all_fives_3p_dmc"
RULE = (f"the rule `experiments/recipes/{FOLDER}/rule.md`, written before the games of fresh "
        "seeds 20261266 and 20261267: on each, not measurably weaker than the model it "
        "replaces against `heuristic` and `search` (the interval of the difference reaches 0) "
        "and head to head (the interval reaches 50%)")
VERDICT = (f"`PYTHONPATH=. .venv/bin/python experiments/recipes/verdict.py {SETTING} "
           f"experiments/recipes/{FOLDER}` (and `.../confirm`) prints every interval; the games: "
           f"`bash experiments/recipes/{FOLDER}/eval.sh`.")
NOTE = (f"the run was `allfives train --config experiments/recipes/{FOLDER}/recipe.yaml` "
        "continuing runs/recipe_all_fives_3p_more: its first four stages are that run's, the "
        "same configs and seeds (tests/test_recipe.py runs a recipe twice from nothing and gets "
        "the same network bit for bit); the times are that run's stages plus the last one's")


def edit(card: dict) -> None:
    card["recipe"]["command"] = f"allfives train --config configs/recipes/{SETTING}.yaml"
    card["note"] = NOTE


if __name__ == "__main__":
    sys.exit(ship.ship_over_copy(SETTING, CANDIDATE, [HERE.relative_to(Path.cwd()),
                                                      HERE.relative_to(Path.cwd()) / "confirm"],
                                 HERE.relative_to(Path.cwd()) / "ship", RULE, VERDICT, edit))
