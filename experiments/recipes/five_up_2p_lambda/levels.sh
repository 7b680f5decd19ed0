#!/usr/bin/env bash
# Once the candidate met rule.md: its round-robin (400 games), oracle (200) and greedy (seed
# 20261264) pairings into ship/ (../levels.sh). From the repository root:
#   bash experiments/recipes/five_up_2p_lambda/levels.sh
exec bash "$(dirname "$0")/../levels.sh" experiments/recipes/five_up_2p_lambda \
  experiments/checkpoints/recipe_lambda_five_up_2p 400 200 20261264 2000 --preset five_up
