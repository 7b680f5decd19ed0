#!/usr/bin/env bash
# The games of rule.md: seed 20261256, 2,000 games per pairing, two at a time, the pairings
# against search (the longest) first. A pairing whose JSON exists is not played again, so the
# same command continues after a stop.
#   bash experiments/recipes/reproduced/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
export HERE=${HERE:-experiments/recipes/reproduced} SEED=20261256 GAMES=${GAMES:-2000}
C=ckpt:experiments/checkpoints
P4="--players 4 --teams" P3="--players 3" P5="--preset five_up"
cat <<LIST | xargs -P 2 -L 1 bash -c '
  s=$0 name=$1 a=$2 b=$3; shift 3; out=$HERE/$s; mkdir -p "$out"
  [ -f "$out/$name.json" ] && exit 0
  nice -n 2 .venv/bin/allfives eval --agents "$a" "$b" "$@" --games "$GAMES" --seed "$SEED" \
    --workers 1 --no-progress --json "$out/$name.part.json" > "$out/$name.txt" 2>&1
  mv "$out/$name.part.json" "$out/$name.json"'
all_fives_4p_teams search $C/recipe2_all_fives_4p_teams search $P4
all_fives_4p_teams control_search ckpt:all_fives_4p_teams search $P4
all_fives_3p search $C/recipe_all_fives_3p search $P3
all_fives_3p control_search ckpt:all_fives_3p search $P3
all_fives_2p search $C/recipe2_all_fives_2p search
all_fives_2p control_search ckpt:all_fives_2p search
five_up_2p search $C/recipe_five_up_2p search $P5
five_up_2p control_search ckpt:five_up_2p search $P5
all_fives_4p_teams h2h $C/recipe2_all_fives_4p_teams ckpt:all_fives_4p_teams $P4
all_fives_3p h2h $C/recipe_all_fives_3p ckpt:all_fives_3p $P3
all_fives_2p h2h $C/recipe2_all_fives_2p ckpt:all_fives_2p
five_up_2p h2h $C/recipe_five_up_2p ckpt:five_up_2p $P5
all_fives_4p_teams heuristic $C/recipe2_all_fives_4p_teams heuristic $P4
all_fives_4p_teams control_heuristic ckpt:all_fives_4p_teams heuristic $P4
all_fives_3p heuristic $C/recipe_all_fives_3p heuristic $P3
all_fives_3p control_heuristic ckpt:all_fives_3p heuristic $P3
all_fives_2p heuristic $C/recipe2_all_fives_2p heuristic
all_fives_2p control_heuristic ckpt:all_fives_2p heuristic
five_up_2p heuristic $C/recipe_five_up_2p heuristic $P5
five_up_2p control_heuristic ckpt:five_up_2p heuristic $P5
LIST
echo done > "$HERE/done"
