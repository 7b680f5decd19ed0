#!/usr/bin/env bash
# Once the candidate met rule.md: its round-robin (300 games), oracle (300) and greedy (seed
# 20261266) pairings into ship/ (../levels.sh). From the repository root:
#   bash experiments/recipes/all_fives_3p_dmc/levels.sh
exec bash "$(dirname "$0")/../levels.sh" experiments/recipes/all_fives_3p_dmc \
  experiments/checkpoints/recipe_dmc_all_fives_3p 300 300 20261266 2004 --players 3
