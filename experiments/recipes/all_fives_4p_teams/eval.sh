#!/usr/bin/env bash
# The games of rule.md, once the recipe's final/ exists. From the repository root:
#   bash experiments/recipes/all_fives_4p_teams/eval.sh RUN_DIR
# RUN_DIR: the recipe's run directory (runs/recipe_all_fives_4p_teams). JSON results beside this file.
set -euo pipefail
RUN=${1:-runs/recipe_all_fives_4p_teams}
OUT=$(dirname "$0")
SEED=20261245
while [ ! -f "$RUN/final/card.json" ]; do sleep 30; done
ev() {  # name, agents...
  local name=$1; shift
  nice -n 2 .venv/bin/allfives eval --agents "$@" --players 4 --teams --games 2000 --seed $SEED \
    --no-progress --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
}
ev h2h "ckpt:$RUN/final" ckpt:all_fives_4p_teams
ev heuristic "ckpt:$RUN/final" heuristic
ev control_heuristic ckpt:all_fives_4p_teams heuristic
ev search "ckpt:$RUN/final" search
ev control_search ckpt:all_fives_4p_teams search
echo done > "$OUT/done"
