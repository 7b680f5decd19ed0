#!/usr/bin/env bash
# What shipping the 3-seat recipe's output needs besides its confirmation (confirm/): its
# fresh-seed figure against greedy (seed 20261253), its pairings in the round robin of the
# levels table (seed 20261130, 300 games, as agents/levels.yaml's table) and against the
# ceiling (oracle, seed 20261244, 300 games). From the repository root:
#   bash experiments/recipes/all_fives_3p/ship/run.sh CANDIDATE_ID
set -euo pipefail
C=${1:-ckpt:experiments/checkpoints/recipe_all_fives_3p}
OUT=$(dirname "$0")
ev() {  # name, games, seed, opponent
  [ -f "$OUT/$1.json" ] && return 0
  nice -n 2 .venv/bin/allfives eval --agents "$C" "$4" --players 3 --games "$2" --seed "$3" \
    --workers 1 --no-progress --json "$OUT/$1.json" > "$OUT/$1.txt" 2>&1
}
ev greedy_20261253 2000 20261253 greedy
for b in random greedy heuristic search; do ev "rr_$b" 300 20261130 "$b"; done
ev oracle_20261244 300 20261244 oracle
