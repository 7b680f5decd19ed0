#!/usr/bin/env bash
# The run and games of dmc_rule.md. From the repository root:
#   bash experiments/oracle_critic/dmc_run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=experiments/oracle_critic
run=runs/oc_dmc
[ -f $run/final/card.json ] || nice -n 10 .venv/bin/allfives train \
  --config experiments/configs/dmc_lambda_2p.yaml --oracle-critic --run-dir $run --quiet \
  > $out/dmc_train.log 2>&1
OUT=$out SEED=20261248
# shellcheck source=../ev.sh
source experiments/ev.sh
ev dmc_heuristic ckpt:$run/final heuristic
ev dmc_control_heuristic ckpt:all_fives_2p heuristic
ev dmc_h2h ckpt:$run/final ckpt:all_fives_2p
ev dmc_search ckpt:$run/final search
ev dmc_control_search ckpt:all_fives_2p search
echo done > $out/dmc_done
