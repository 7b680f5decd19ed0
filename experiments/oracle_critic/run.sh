#!/usr/bin/env bash
# The runs and games of rule.md. From the repository root:
#   bash experiments/oracle_critic/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=experiments/oracle_critic
train() {  # run_dir, extra flags
  local run=$1; shift
  nice -n 10 .venv/bin/allfives train --config configs/train/residual_2p.yaml --total-steps 4000000 \
    --seed 0 --run-dir "$run" --quiet "$@"
}
train runs/oc_control --no-oracle-critic > $out/train_control.log 2>&1 &
train runs/oc_oracle --oracle-critic > $out/train_oracle.log 2>&1 &
wait
ev() {  # name, agents...
  local name=$1; shift
  nice -n 10 .venv/bin/allfives eval --agents "$@" --games 2000 --seed 20261246 --workers 1 \
    --no-progress --json "$out/$name.json" > "$out/$name.txt" 2>&1
}
ev control_heuristic ckpt:runs/oc_control/final heuristic &
ev oracle_heuristic ckpt:runs/oc_oracle/final heuristic &
wait
ev h2h ckpt:runs/oc_oracle/final ckpt:runs/oc_control/final
echo done > $out/done
