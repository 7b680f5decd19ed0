# Sourced by the experiments' scripts, from the repository root, with OUT and SEED set:
#   ev NAME AGENTS...   2,000 duplicate games of AGENTS on seed SEED into OUT/NAME.json and
#                       OUT/NAME.txt, unless OUT/NAME.json exists (a rerun plays what is missing)
ev() {
  local name=$1; shift
  [ -f "$OUT/$name.json" ] && return 0
  nice -n 10 .venv/bin/allfives eval --agents "$@" --games 2000 --seed "$SEED" --workers 1 \
    --no-progress --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
}
