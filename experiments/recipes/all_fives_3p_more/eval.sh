#!/usr/bin/env bash
# The games of rule.md, once the recipe's final/ exists. From the repository root:
#   bash experiments/recipes/all_fives_3p_more/eval.sh RUN_DIR [SEED OUT_DIR]
# RUN_DIR: the recipe's run directory (runs/recipe_all_fives_3p_more). Seed 20261262 by default
# (results beside this file); the confirmation: eval.sh RUN_DIR 20261263 .../confirm
H=$(dirname "$0")
exec bash "$H/../compare.sh" "${1:-runs/recipe_all_fives_3p_more}" "${3:-$H}" \
  "${2:-20261262}" all_fives_3p --players 3
