#!/usr/bin/env bash
# Issue 53, first measurement: search with the learned value at its leaves. From the
# repository root, once runs/recipe_all_fives_2p_half/3_dmc/final exists:
#   bash experiments/value_search/run.sh
set -euo pipefail
RUN=runs/recipe_all_fives_2p_half/3_dmc/final
NET=experiments/checkpoints/value_all_fives_2p
OUT=experiments/value_search
SEED=20261272  # fresh: used for nothing else
[ -d "$NET" ] || .venv/bin/python experiments/value_search/attach_value.py "$RUN" "$RUN/trainer.pt" "$NET"
ev() {  # name, agents...
  local name=$1; shift
  [ -f "$OUT/$name.json" ] && return 0
  nice -n 2 .venv/bin/allfives eval --agents "$@" --games 400 --seed "$SEED" --no-progress \
    --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
}
ev value_vs_search "search:net=$NET,depth=1,value=1" search
ev net_vs_search "ckpt:$NET" search
