#!/usr/bin/env bash
# The five_up and 3-seat recipes of rule.md (now configs/recipes/five_up_2p.yaml and
# all_fives_3p.yaml; the candidates ran as recipes five_up_2p_half and all_fives_3p_half), one
# after another at normal priority (their times are the rule's), each one's games
# (../compare.sh) at the lowest priority while the next trains. From the repository root:
#   bash experiments/recipes/half/run.sh
set -euo pipefail
H=experiments/recipes/half
C=experiments/recipes/compare.sh
[ -f runs/recipe_five_up_2p/final/card.json ] ||
  .venv/bin/allfives train --config configs/recipes/five_up_2p.yaml > $H/five_up_2p.log 2>&1
nice -n 19 bash $C runs/recipe_five_up_2p $H/five_up_2p 20261273 five_up_2p --preset five_up &
.venv/bin/allfives train --config configs/recipes/all_fives_3p.yaml > $H/all_fives_3p.log 2>&1
nice -n 19 bash $C runs/recipe_all_fives_3p $H/all_fives_3p 20261274 all_fives_3p --players 3 &
wait
