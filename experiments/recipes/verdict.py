"""The verdict of a recipe candidate's rule.md on its fresh seed (the comparison of
reproduced/decide.py) from the JSON results in one folder. From the repository root, once its
eval.sh has played every pairing:

    PYTHONPATH=. .venv/bin/python experiments/recipes/verdict.py SETTING DIR
    e.g. verdict.py all_fives_3p experiments/recipes/all_fives_3p_more
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent / "reproduced")]
import decide  # noqa: E402


def main(setting: str, folder: Path) -> None:
    names = ["h2h", *decide.BOTS, *(f"control_{b}" for b in decide.BOTS)]
    missing = [n for n in names if not (folder / f"{n}.json").is_file()]
    if missing:
        sys.exit(
            f"verdict.py: {folder} lacks {', '.join(m + '.json' for m in missing)}; "
            "play its eval.sh first"
        )
    verdict = decide.judge([folder])
    decide.show(setting, "fresh", verdict)
    print(
        f"  => {'REPLACE' if verdict['ok'] else 'keep the shipped model'} "
        "(and the recipe's wall time must be at most 2 hours)"
    )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(
            "usage: verdict.py SETTING DIR (e.g. all_fives_3p experiments/recipes/all_fives_3p_more)"
        )
    main(sys.argv[1], Path(sys.argv[2]))
