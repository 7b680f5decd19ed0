#!/usr/bin/env bash
# The pairings on standard input, two at a time: one per line,
#   SETTING NAME GAMES SEED AGENT_A AGENT_B [game flags...]
# each played by `allfives eval` into $HERE/SETTING/NAME.json (and .txt); a pairing whose JSON
# exists is not played again, so a stopped queue continues where it was. Used by run.sh and
# levels.sh, from the repository root with HERE exported.
set -euo pipefail
xargs -P 2 -L 1 bash -c '
  s=$0 name=$1 games=$2 seed=$3 a=$4 b=$5; shift 5; out=$HERE/$s; mkdir -p "$out"
  [ -f "$out/$name.json" ] && exit 0
  nice -n 2 .venv/bin/allfives eval --agents "$a" "$b" "$@" --games "$games" --seed "$seed" \
    --workers 1 --no-progress --json "$out/$name.part.json" > "$out/$name.txt" 2>&1
  mv "$out/$name.part.json" "$out/$name.json"'
