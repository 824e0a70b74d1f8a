#!/usr/bin/env bash
# GPU checks for a lead on a CUDA machine (e.g. an H200): gpu tests, a snapshot, the GPU benchmark suite.
# Usage: OUT=/some/dir tests/perf/gpu_suite.sh   (PYTHON defaults to python; outputs land in $OUT)
set -uo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python}
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT"
export PTH_TOP_DATA_DIR="$OUT/data"
status=0

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || true
"$PYTHON" -m pytest -m gpu -q tests > "$OUT/pytest-gpu.txt" 2>&1 || status=1
tail -n 3 "$OUT/pytest-gpu.txt"
"$PYTHON" -m tui snapshot --json > "$OUT/snapshot.json" 2> "$OUT/snapshot.stderr" || status=1
"$PYTHON" -m tui bench --device cuda:0 --suite standard --disk-dir "$OUT" --json --out "$OUT/bench-cuda-standard.json" \
    > "$OUT/bench-cuda-standard.stdout" 2> "$OUT/bench-cuda-standard.stderr" || status=1
grep -v '^\[' "$OUT/bench-cuda-standard.stderr" | tail -n 40
"$PYTHON" tests/perf/check_gpu_targets.py "$OUT/bench-cuda-standard.json" | tee "$OUT/targets.txt" || status=1
exit $status
