"""Ship the candidate of rule.md here (two_seeds.py). From the repository root, after levels.sh:

    PYTHONPATH=. .venv/bin/python experiments/recipes/five_up_2p_lambda/ship.py
"""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from two_seeds import ship_two_seeds  # noqa: E402

if __name__ == "__main__":
    sys.exit(ship_two_seeds("five_up_2p", "recipe_lambda_five_up_2p", "five_up_2p_lambda"))
