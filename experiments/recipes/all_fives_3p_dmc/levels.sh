#!/usr/bin/env bash
# Once the candidate met rule.md: its pairings in the 3-seat round robin (seed 20261130, 300
# games against every bot: the levels table and Elo), against oracle (seed 20261244, 300 games
# as the shipped model's) and against greedy on the fresh seed, two at a time, into ship/ here
# (a pairing whose JSON exists is not played again). From the repository root:
#   bash experiments/recipes/all_fives_3p_dmc/levels.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
export HERE=experiments/recipes/all_fives_3p_dmc
C=ckpt:experiments/checkpoints/recipe_dmc_all_fives_3p P3="--players 3"
cat <<LIST | bash experiments/recipes/reproduced/queue.sh
ship rr_search 300 20261130 $C search $P3
ship oracle 300 20261244 $C oracle $P3
ship rr_heuristic 300 20261130 $C heuristic $P3
ship rr_greedy 300 20261130 $C greedy $P3
ship rr_random 300 20261130 $C random $P3
ship greedy 2004 20261266 $C greedy $P3
LIST
