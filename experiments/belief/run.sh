#!/usr/bin/env bash
# The run and games of rule.md. From the repository root:
#   bash experiments/belief/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=experiments/belief
run=runs/belief_dmc
[ -f $run/final/card.json ] || nice -n 10 .venv/bin/allfives train \
  --config experiments/configs/dmc_lambda_2p.yaml --belief-aux 1.0 --run-dir $run --quiet \
  > $out/train.log 2>&1
OUT=$out SEED=20261248
# shellcheck source=../ev.sh
source experiments/ev.sh
ev heuristic ckpt:$run/final heuristic
ev h2h ckpt:$run/final ckpt:all_fives_2p
ev search ckpt:$run/final search
echo done > $out/done
