#!/usr/bin/env bash
# The games of rule.md, once the recipe's final/ exists. From the repository root:
#   bash experiments/recipes/all_fives_2p_half/eval.sh [RUN_DIR]
# RUN_DIR: the recipe's run directory (runs/recipe_all_fives_2p_half). JSON results beside this file.
exec bash "$(dirname "$0")/../compare.sh" "${1:-runs/recipe_all_fives_2p_half}" "$(dirname "$0")" \
  20261269 all_fives_2p
