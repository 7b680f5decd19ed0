#!/usr/bin/env bash
# Once the candidate met rule.md: its pairings in the five_up round robin (seed 20261130, 400
# games against every bot: the levels table and Elo), against oracle (seed 20261244, 200 games
# as the shipped model's) and against greedy on the fresh seed, two at a time, into ship/ here
# (a pairing whose JSON exists is not played again). From the repository root:
#   bash experiments/recipes/five_up_2p_lambda/levels.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
export HERE=experiments/recipes/five_up_2p_lambda
C=ckpt:experiments/checkpoints/recipe_lambda_five_up_2p P5="--preset five_up"
cat <<LIST | bash experiments/recipes/reproduced/queue.sh
ship rr_search 400 20261130 $C search $P5
ship oracle 200 20261244 $C oracle $P5
ship rr_heuristic 400 20261130 $C heuristic $P5
ship rr_greedy 400 20261130 $C greedy $P5
ship rr_random 400 20261130 $C random $P5
ship greedy 2000 20261264 $C greedy $P5
LIST
