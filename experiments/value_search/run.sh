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
if [ "${1:-}" != exit ]; then
  ev value_vs_search "search:net=$NET,depth=1,value=1" search
  ev net_vs_search "ckpt:$NET" search
fi

# Expert iteration with the learned value (README, 2026-12-05): once the recipe has run
#   allfives train --config experiments/value_search/exit_2p.yaml
#   bash experiments/value_search/run.sh exit
[ "${1:-}" = exit ] || exit 0
ev2() {  # name, games, seed, agents...
  local name=$1 games=$2 seed=$3; shift 3
  [ -f "$OUT/$name.json" ] && return 0
  nice -n 2 .venv/bin/allfives eval --agents "$@" --games "$games" --seed "$seed" --workers 2 \
    --no-progress --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
}
for r in 0 1 2 3; do
  net=$NET; [ "$r" = 0 ] || net=runs/exit_2p/${r}_round$r/final
  ev2 "exit_r${r}_vs_heuristic" 1000 20261283 "ckpt:$net" heuristic
  ev2 "exit_r${r}_valued_vs_search" 200 20261284 "search:net=$net,value=1,depth=1,batched=1" search
done
