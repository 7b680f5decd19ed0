"""The verdict of rule.md here (seed 20261258). From the repository root, once eval.sh has
played every pairing:

    PYTHONPATH=. .venv/bin/python experiments/recipes/all_fives_4p_teams_more/decide.py
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]
import verdict  # noqa: E402

verdict.main("all_fives_4p_teams", HERE)
