#!/usr/bin/env bash
# The games of rule.md here, from the repository root:
#   bash experiments/recipes/all_fives_4p_teams_more/confirm/confirm.sh
set -euo pipefail
OUT=experiments/recipes/all_fives_4p_teams_more/confirm
for bot in heuristic search; do
  [ -f "$OUT/$bot.json" ] && continue
  nice -n 2 .venv/bin/allfives eval --agents ckpt:experiments/checkpoints/recipe3_all_fives_4p_teams \
    $bot --players 4 --teams --games 2000 --seed 20261259 --no-progress \
    --json "$OUT/$bot.part.json" > "$OUT/$bot.txt" 2>&1
  mv "$OUT/$bot.part.json" "$OUT/$bot.json"
done
