#!/usr/bin/env bash
# Once the candidate met rule.md: its pairings in the 4-seat round robin (seed 20261130, 300
# games against every bot: the levels table and Elo), against oracle (seed 20261244, 400 games
# as the shipped model's) and against a greedy team on the fresh seed, two at a time, into
# ship/ here (a pairing whose JSON exists is not played again). From the repository root:
#   bash experiments/recipes/all_fives_4p_teams_more/levels.sh CANDIDATE
set -euo pipefail
cd "$(dirname "$0")/../../.."
export HERE=experiments/recipes/all_fives_4p_teams_more
C=$1 P4="--players 4 --teams"
cat <<LIST | bash experiments/recipes/reproduced/queue.sh
ship rr_search 300 20261130 $C search $P4
ship oracle 400 20261244 $C oracle $P4
ship rr_heuristic 300 20261130 $C heuristic $P4
ship rr_greedy 300 20261130 $C greedy $P4
ship rr_random 300 20261130 $C random $P4
ship greedy 2000 20261258 $C greedy $P4
LIST
