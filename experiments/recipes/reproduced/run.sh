#!/usr/bin/env bash
# The games of rule.md: seed 20261256, 2,000 games per pairing, two at a time, the pairings
# against search (the longest) first. A pairing whose JSON exists is not played again, so the
# same command continues after a stop.
#   bash experiments/recipes/reproduced/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
export HERE=${HERE:-experiments/recipes/reproduced} SEED=20261256 GAMES=${GAMES:-2000}
C=ckpt:experiments/checkpoints Q="$GAMES $SEED"
pairings() {  # setting, candidate, control, game flags: the five pairings of one setting
  local s=$1 c=$C/$2 m=ckpt:$3; shift 3
  local f=${*:+ $*}  # no trailing blank: xargs -L would join the next line to it
  printf '%s\n' "$s search $Q $c search$f" "$s control_search $Q $m search$f" \
    "$s h2h $Q $c $m$f" "$s heuristic $Q $c heuristic$f" "$s control_heuristic $Q $m heuristic$f"
}
list=$(pairings all_fives_4p_teams recipe2_all_fives_4p_teams all_fives_4p_teams --players 4 --teams
  pairings all_fives_3p recipe_all_fives_3p all_fives_3p --players 3
  pairings all_fives_2p recipe2_all_fives_2p all_fives_2p
  pairings five_up_2p recipe_five_up_2p five_up_2p --preset five_up)
{ grep -E '^\S+ \S*search ' <<<"$list"; grep -vE '^\S+ \S*search ' <<<"$list"; } \
  | bash experiments/recipes/reproduced/queue.sh
echo done > "$HERE/done"
