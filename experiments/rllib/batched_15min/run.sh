#!/usr/bin/env bash
# The 15-minute run of docs/rllib.md and its evaluations (on 2026-12-03 it ran beside the five_up recipe's dmc stage).
# (configs/train/rllib.yaml was then named rllib_batched.yaml; it is the default of --backend rllib now.)
cd "$(dirname "$0")/../../.."
date > /tmp/rllib15.start
/usr/bin/time -v .venv/bin/allfives train --backend rllib --config configs/train/rllib.yaml \
  --run-dir runs/rllib_batched_15min > /tmp/rllib15.log 2>&1
date > /tmp/rllib15.end
for a in "ckpt:runs/rllib_batched_15min/final greedy" "heuristic greedy" "ckpt:runs/rllib_batched_15min/final heuristic"; do
  .venv/bin/allfives eval --agents $a --games 200 --seed 20261243 --workers 1 --no-progress \
    --json "/tmp/rllib15_$(echo $a | tr ' :/' '___').json" >> /tmp/rllib15_eval.txt 2>&1
done
date >> /tmp/rllib15.end
