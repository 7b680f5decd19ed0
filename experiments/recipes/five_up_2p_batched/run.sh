#!/usr/bin/env bash
# The five_up recipe run again with labels on the batched engine (2026-12-04, 53.2 min), its
# output (experiments/checkpoints/recipe2_five_up_2p) against the shipped five_up_2p (the
# first run's output) on fresh seed 20261257: a measurement, not a ship decision.
#   bash experiments/recipes/five_up_2p_batched/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=experiments/recipes/five_up_2p_batched C=ckpt:experiments/checkpoints/recipe2_five_up_2p
ev() {  # name, agents...
  local name=$1; shift
  [ -f "$OUT/$name.json" ] && return 0
  .venv/bin/allfives eval --agents "$@" --preset five_up --games 2000 --seed 20261257 \
    --workers 2 --no-progress --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
}
ev h2h "$C" ckpt:five_up_2p
ev heuristic "$C" heuristic
ev control_heuristic ckpt:five_up_2p heuristic
ev search "$C" search
ev control_search ckpt:five_up_2p search
