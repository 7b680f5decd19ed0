#!/usr/bin/env bash
# Issue 52's GPU check, run once from the repo root on a fresh 16-core H200 machine:
#   bash experiments/gpu/check.sh          # everything goes to ${OUT:-/tmp}/gpu_check.txt
# 1. a venv: .venv if its torch sees the GPU, else .venv-gpu over the image's CUDA torch, the
#    packages the image lacks from dist/gpu-wheels when carried (gymnasium, pettingzoo,
#    farama-notifications, stable-baselines3, sb3-contrib: `pip download --no-deps` of the
#    versions in .venv), else from the registry;
# 2. tests/test_cuda.py and the 3 tests that failed on CUDA (-x -q);
# 3. the fast-path learner on cuda vs cpu (experiments/gpu/learner_bench.py);
# 4. rollout steps/s with 2 vs 16 workers (python -m experiments.bench.rollout_bench).
# Every step has a timeout and the script goes on after a failed one; the whole stays
# under 8 minutes (BUDGET seconds). Tested on a CPU machine: the CUDA tests skip there.
[ -x .venv/bin/python ] || NEED_VENV=1
LOG="${OUT:-/tmp}/gpu_check.txt"
mkdir -p "$(dirname "$LOG")"
exec > >(tee "$LOG") 2>&1
set -x
BUDGET=${BUDGET:-450}
START=$SECONDS
export PYTHONUNBUFFERED=1

step() {  # step CAP_SECONDS COMMAND...: run it under timeout, within what is left
  local cap=$1; shift
  local left=$((BUDGET - (SECONDS - START)))
  local t=$((cap < left ? cap : left))
  if [ "$t" -lt 10 ]; then echo "SKIPPED (out of time): $*"; return 0; fi
  timeout --kill-after=10 "$t" "$@"
  local rc=$?
  echo "=== rc=$rc ($((SECONDS - START)) s so far): $*"
  return 0
}

works() {  # works PYTHON: it imports the project and torch
  "$1" -c "import torch, allfives_train.fastppo, gymnasium, sb3_contrib" 2>/dev/null
}

cuda() {  # cuda PYTHON: its torch sees a GPU
  "$1" -c "import torch, sys; sys.exit(not torch.cuda.is_available())" 2>/dev/null
}

PY=.venv/bin/python
if works "$PY" && cuda "$PY"; then
    :  # the project's venv, with a CUDA torch
elif cuda python3; then  # the image's python3 holds a CUDA torch: a venv that sees its
    # packages (a .pth naming its site-packages: python3 may itself be a venv) keeps that torch
    PY=.venv-gpu/bin/python
    works "$PY" || step 200 bash -c 'set -e; python3 -m venv --system-site-packages .venv-gpu
        purelib="import sysconfig; print(sysconfig.get_paths()[\"purelib\"])"
        python3 -c "$purelib" > "$(.venv-gpu/bin/python -c "$purelib")/image_site.pth"
        wheels=(); ls dist/gpu-wheels/*.whl >/dev/null 2>&1 &&
            wheels=(--no-index --find-links dist/gpu-wheels)  # carried: no registry needed
        .venv-gpu/bin/pip install -q "${wheels[@]}" -e ".[train]" ||
            .venv-gpu/bin/pip install -q --no-build-isolation -e ".[train]"'
elif [ -n "${NEED_VENV:-}" ]; then  # no CUDA torch anywhere: the project's pins
    step 240 bash -c 'python3 -m venv .venv &&
        .venv/bin/pip install -q -c constraints.txt -e ".[train,dev]"'
fi
works "$PY" || echo "WARNING: $PY does not import the project; the steps below will fail"
"$PY" - <<'PYEOF'
import os, torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "available",
      torch.cuda.is_available(), "cores", len(os.sched_getaffinity(0)))
if torch.cuda.is_available():
    print("gpu", torch.cuda.get_device_name(0), "bf16",
          torch.cuda.is_bf16_supported(including_emulation=False))
PYEOF
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv 2>/dev/null || true

step 150 "$PY" -m pytest -x -q -p no:cacheprovider -rs tests/test_cuda.py
step 120 "$PY" -m pytest -x -q -p no:cacheprovider -rs \
    "tests/test_precision.py::test_train_bench_prints_the_machine_and_the_precision"
step 90 "$PY" experiments/gpu/learner_bench.py --devices cpu cuda
step 90 "$PY" -m experiments.bench.rollout_bench --config configs/train/selfplay_2p.yaml \
    --workers 2 16 --updates 3
echo "done in $((SECONDS - START)) s; log: $LOG"
