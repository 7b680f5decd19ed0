#!/usr/bin/env bash
# After run.sh: each candidate's pairings in its setting's round robin (seed 20261130, against
# every bot, as many games as agents/levels.yaml's table: the level tables and Elo;
# experiments/strength/merge.py joins them to the table), against oracle (seed 20261244, the
# shipped models' game counts) and against greedy on the fresh seed. The 3-seat candidate's
# are in ../all_fives_3p/ship/. Two at a time; a pairing whose JSON exists is not played again.
#   bash experiments/recipes/reproduced/levels.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
export HERE=${HERE:-experiments/recipes/reproduced}
while [ ! -f "$HERE/done" ]; do sleep 30; done
C=ckpt:experiments/checkpoints
P4="--players 4 --teams" P3="--players 3" P5="--preset five_up"
cat <<LIST | bash experiments/recipes/reproduced/queue.sh
all_fives_2p oracle 1000 20261244 $C/recipe2_all_fives_2p oracle
all_fives_2p rr_search 400 20261130 $C/recipe2_all_fives_2p search
five_up_2p rr_search 400 20261130 $C/recipe_five_up_2p search $P5
five_up_2p oracle 200 20261244 $C/recipe_five_up_2p oracle $P5
all_fives_2p rr_heuristic 400 20261130 $C/recipe2_all_fives_2p heuristic
all_fives_2p rr_greedy 400 20261130 $C/recipe2_all_fives_2p greedy
all_fives_2p rr_random 400 20261130 $C/recipe2_all_fives_2p random
all_fives_2p greedy 2000 20261256 $C/recipe2_all_fives_2p greedy
five_up_2p greedy 2000 20261256 $C/recipe_five_up_2p greedy $P5
five_up_2p rr_heuristic 400 20261130 $C/recipe_five_up_2p heuristic $P5
five_up_2p rr_greedy 400 20261130 $C/recipe_five_up_2p greedy $P5
five_up_2p rr_random 400 20261130 $C/recipe_five_up_2p random $P5
LIST
echo done > "$HERE/levels_done"
