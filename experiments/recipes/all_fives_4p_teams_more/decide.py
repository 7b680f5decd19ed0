"""The verdict of rule.md here (seed 20261258; the comparison of reproduced/decide.py). From the
repository root, once eval.sh has played every pairing:

    PYTHONPATH=. .venv/bin/python experiments/recipes/all_fives_4p_teams_more/decide.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "reproduced")]
import decide  # noqa: E402

verdict = decide.judge([HERE])
decide.show("all_fives_4p_teams", "fresh", verdict)
print(
    f"  => {'REPLACE' if verdict['ok'] else 'keep the shipped model'} "
    "(and the recipe's wall time must be at most 2 hours)"
)
