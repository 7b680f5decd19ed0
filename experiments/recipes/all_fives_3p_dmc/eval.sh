#!/usr/bin/env bash
# The games of rule.md, once the recipe's final/ exists. From the repository root:
#   bash experiments/recipes/all_fives_3p_dmc/eval.sh [RUN_DIR SEED OUT_DIR]
# Seed 20261266 by default (results beside this file); the confirmation:
#   eval.sh runs/recipe_all_fives_3p_dmc 20261267 experiments/recipes/all_fives_3p_dmc/confirm
H=$(dirname "$0")
exec bash "$H/../compare.sh" "${1:-runs/recipe_all_fives_3p_dmc}" "${3:-$H}" \
  "${2:-20261266}" all_fives_3p --players 3
