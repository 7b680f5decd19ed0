#!/usr/bin/env bash
# The ceiling of the strength table (issue 36): each setting's shipped model and `search`
# against `oracle` (search that sees every hand, agents/oracle.py), on fresh seed 20261244.
#   bash experiments/strength/ceiling/run.sh
# (2 seats at 1,000 games per pairing, the others at 200-400, for the machine time.) A pairing
# whose JSON exists is not played again.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=experiments/strength/ceiling
seed=20261244
ev() { nice -n 10 .venv/bin/allfives eval --seed $seed --workers 1 --no-progress "$@"; }
[ -f $out/2p_model.json ] || ev --agents ckpt:all_fives_2p oracle --games 1000 --json $out/2p_model.json
[ -f $out/2p_search.json ] || ev --agents search oracle --games 1000 --json $out/2p_search.json
[ -f $out/4p_teams_model.json ] || ev --agents ckpt:all_fives_4p_teams oracle --players 4 --teams --games 400 --json $out/4p_teams_model.json
[ -f $out/4p_teams_search.json ] || ev --agents search oracle --players 4 --teams --games 400 --json $out/4p_teams_search.json
[ -f $out/five_up_model.json ] || ev --agents ckpt:five_up_2p oracle --preset five_up --games 200 --json $out/five_up_model.json
[ -f $out/five_up_search.json ] || ev --agents search oracle --preset five_up --games 200 --json $out/five_up_search.json
[ -f $out/3p_model.json ] || ev --agents ckpt:all_fives_3p oracle --players 3 --games 300 --json $out/3p_model.json
[ -f $out/3p_search.json ] || ev --agents search oracle --players 3 --games 300 --json $out/3p_search.json
