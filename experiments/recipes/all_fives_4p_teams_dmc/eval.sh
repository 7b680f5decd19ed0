#!/usr/bin/env bash
# The games of rule.md, once the recipe's final/ exists. From the repository root:
#   bash experiments/recipes/all_fives_4p_teams_dmc/eval.sh [RUN_DIR SEED OUT_DIR]
H=$(dirname "$0")
exec bash "$H/../compare.sh" "${1:-runs/recipe_all_fives_4p_teams_dmc}" "${3:-$H}" \
  "${2:-20261268}" all_fives_4p_teams --players 4 --teams
