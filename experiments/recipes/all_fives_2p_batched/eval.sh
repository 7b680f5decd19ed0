#!/usr/bin/env bash
# The games of rule.md, once the recipe's final/ exists. From the repository root:
#   bash experiments/recipes/all_fives_2p_batched/eval.sh RUN_DIR
# The control's pairings on these deals are the first run's (copied); JSON results beside this file.
exec bash "$(dirname "$0")/../compare.sh" "${1:-runs/recipe_all_fives_2p}" "$(dirname "$0")" \
  20261247 all_fives_2p
