#!/usr/bin/env bash
# The games of rule.md, once the recipe's final/ exists. From the repository root:
#   bash experiments/recipes/five_up_2p_lambda/eval.sh [RUN_DIR SEED OUT_DIR]
# Seed 20261264 by default (results beside this file); the confirmation:
#   eval.sh runs/recipe_five_up_2p_lambda 20261265 experiments/recipes/five_up_2p_lambda/confirm
H=$(dirname "$0")
exec bash "$H/../compare.sh" "${1:-runs/recipe_five_up_2p_lambda}" "${3:-$H}" \
  "${2:-20261264}" five_up_2p --preset five_up
