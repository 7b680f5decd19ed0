"""Ship a candidate whose rule.md asked for the comparison on two fresh seeds (its folder's
results and ``confirm/``), once verdict.py says REPLACE on both and its levels.sh has played:
reproduced/ship.py's ``ship_over_copy`` with the rule, verdict and card text of that kind of
rule. From the repository root:

    PYTHONPATH=. .venv/bin/python experiments/recipes/two_seeds.py SETTING CANDIDATE FOLDER
    e.g. two_seeds.py five_up_2p recipe_lambda_five_up_2p five_up_2p_lambda
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "reproduced")]
import ship  # noqa: E402


def ship_two_seeds(setting: str, candidate: str, folder: str, note: str | None = None) -> int:
    """Ship ``experiments/checkpoints/<candidate>`` as ``setting``'s model by the rule in
    ``experiments/recipes/<folder>``; ``note``: a line for its card."""
    where = Path("experiments/recipes") / folder
    dirs = [where, where / "confirm"]
    missing = [str(d / "h2h.json") for d in dirs if not (d / "h2h.json").is_file()]
    if missing:
        sys.exit(f"two_seeds.py: {', '.join(missing)} missing; play eval.sh on both seeds first")
    seeds = " and ".join(str(json.loads((d / "h2h.json").read_text())["seed"]) for d in dirs)
    rule = (f"the rule `{where}/rule.md`, written before the games of fresh seeds {seeds}: on "
            "each, not measurably weaker than the model it replaces against `heuristic` and "
            "`search` (the interval of the difference reaches 0) and head to head (the "
            "interval reaches 50%)")
    verdict = (f"`PYTHONPATH=. .venv/bin/python experiments/recipes/verdict.py {setting} "
               f"{where}` (and `.../confirm`) prints every interval; the games: "
               f"`bash {where}/eval.sh`.")

    def edit(card: dict) -> None:
        card["recipe"]["command"] = f"allfives train --config configs/recipes/{setting}.yaml"
        if note:
            card["note"] = note

    return ship.ship_over_copy(setting, candidate, dirs, where / "ship", rule, verdict, edit)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: two_seeds.py SETTING CANDIDATE FOLDER "
                 "(e.g. five_up_2p recipe_lambda_five_up_2p five_up_2p_lambda)")
    sys.exit(ship_two_seeds(*sys.argv[1:]))
