#!/usr/bin/env bash
# The games of rule.md, once the recipe's final/ exists. From the repository root:
#   bash experiments/recipes/five_up_2p/eval.sh RUN_DIR
# RUN_DIR: the recipe's run directory (runs/recipe_five_up_2p). JSON results beside this file.
set -euo pipefail
RUN=${1:-runs/recipe_five_up_2p}
OUT=$(dirname "$0")
SEED=20261242
while [ ! -f "$RUN/final/card.json" ]; do sleep 30; done
ev() {  # name, agents...
  local name=$1; shift
  nice -n 2 .venv/bin/allfives eval --agents "$@" --preset five_up --games 2000 --seed $SEED \
    --no-progress --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
}
ev h2h "ckpt:$RUN/final" ckpt:five_up_2p
ev heuristic "ckpt:$RUN/final" heuristic
ev control_heuristic ckpt:five_up_2p heuristic
ev search "ckpt:$RUN/final" search
ev control_search ckpt:five_up_2p search
echo done > "$OUT/done"
