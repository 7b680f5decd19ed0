"""Ship the candidate of rule.md here (two_seeds.py), its card noting that the run continued
another. From the repository root, after levels.sh:

    PYTHONPATH=. .venv/bin/python experiments/recipes/all_fives_3p_dmc/ship.py
"""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from two_seeds import ship_two_seeds  # noqa: E402

NOTE = ("the run was `allfives train --config experiments/recipes/all_fives_3p_dmc/recipe.yaml` "
        "continuing runs/recipe_all_fives_3p_more: its first four stages are that run's, the "
        "same configs and seeds (tests/test_recipe.py runs a recipe twice from nothing and gets "
        "the same network bit for bit); the times are that run's stages plus the last one's")

if __name__ == "__main__":
    sys.exit(ship_two_seeds("all_fives_3p", "recipe_dmc_all_fives_3p", "all_fives_3p_dmc", NOTE))
