#!/usr/bin/env bash
# The games of rule.md, once the recipe's final/ exists. From the repository root:
#   bash experiments/recipes/five_up_2p/eval.sh RUN_DIR
# RUN_DIR: the recipe's run directory (runs/recipe_five_up_2p). JSON results beside this file.
exec bash "$(dirname "$0")/../compare.sh" "${1:-runs/recipe_five_up_2p}" "$(dirname "$0")" \
  20261242 five_up_2p --preset five_up
