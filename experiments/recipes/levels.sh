#!/usr/bin/env bash
# Once a candidate met its rule.md: its pairings in its setting's round robin (seed 20261130,
# against every bot: the levels table and Elo), against oracle (seed 20261244) and against
# greedy on its fresh seed, two at a time, into DIR/ship/ (a pairing whose JSON exists is not
# played again). From the repository root:
#   bash experiments/recipes/levels.sh DIR CANDIDATE RR_GAMES ORACLE_GAMES SEED GREEDY_GAMES [game flags...]
# e.g. levels.sh experiments/recipes/five_up_2p_lambda experiments/checkpoints/recipe_lambda_five_up_2p 400 200 20261264 2000 --preset five_up
set -euo pipefail
if [ $# -lt 6 ]; then
  echo "usage: levels.sh DIR CANDIDATE RR_GAMES ORACLE_GAMES SEED GREEDY_GAMES [game flags...]" >&2
  exit 2
fi
cd "$(dirname "$0")/../.."
export HERE=$1
C=ckpt:${2#ckpt:} RR=$3 ORACLE=$4 SEED=$5 GREEDY=$6
shift 6
F="$*"
cat <<LIST | bash experiments/recipes/reproduced/queue.sh
ship rr_search $RR 20261130 $C search $F
ship oracle $ORACLE 20261244 $C oracle $F
ship rr_heuristic $RR 20261130 $C heuristic $F
ship rr_greedy $RR 20261130 $C greedy $F
ship rr_random $RR 20261130 $C random $F
ship greedy $GREEDY $SEED $C greedy $F
LIST
