#!/usr/bin/env bash
# The games of a recipe's rule.md, once the recipe's final/ exists: the candidate and the
# shipped model against heuristic and search on the same deals, and head to head.
#   bash experiments/recipes/compare.sh RUN_DIR OUT_DIR SEED MODEL [game flags...]
# e.g. compare.sh runs/recipe_five_up_2p experiments/recipes/five_up_2p 20261242 five_up_2p --preset five_up
set -euo pipefail
RUN=$1 OUT=$2 SEED=$3 MODEL=$4
shift 4
while [ ! -f "$RUN/final/card.json" ]; do sleep 30; done
ev() {  # name, agents... (a pairing whose JSON exists is not played again)
  local name=$1; shift
  [ -f "$OUT/$name.json" ] && return 0
  nice -n 2 .venv/bin/allfives eval --agents "$@" "${GAME[@]}" --games 2000 --seed "$SEED" \
    --no-progress --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
}
GAME=("$@")
mkdir -p "$OUT"
ev h2h "ckpt:$RUN/final" "ckpt:$MODEL"
ev heuristic "ckpt:$RUN/final" heuristic
ev control_heuristic "ckpt:$MODEL" heuristic
ev search "ckpt:$RUN/final" search
ev control_search "ckpt:$MODEL" search
echo done > "$OUT/done"
