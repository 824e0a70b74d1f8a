#!/usr/bin/env bash
# gpu_check.sh: one-shot validation of pth-top's benchmarks on an NVIDIA GPU (written for an H100/H200), in an
# 8-minute slot: BUDGET_S (420) for the steps + 60 s for the last two, every step under `timeout`, the least
# important last (skipped when the time is gone).
#
#   bash tests/perf/gpu_check.sh [OUT_DIR]                 # results in OUT_DIR, else $OUT, else ./gpu-check-out
#   PYTHON=/path/to/python bash tests/perf/gpu_check.sh   # the interpreter with CUDA torch (else searched)
#   bash tests/perf/gpu_check.sh --dry-run                # CPU torch, tiny sizes: checks the script itself
#
# Needs one interpreter with a CUDA build of torch (exit 3 and NEEDS.txt otherwise). The `pth-top` CLI steps
# (snapshot, bench with % of peak, pytest -m gpu) need an interpreter with pth-top installed (PTH_TOP_PYTHON,
# the torch one, or ./.venv, whose CPU torch makes the gpu tests fail); without it the bench child runs directly
# (raw events; check_gpu_targets.py then takes the datasheet peaks from the catalog entry naming the device).
# PTH_TOP_FLOOR_PYTHON=/path/to/python with torch 2.4.x (the declared floor) adds a step running
# tests/bench/test_torch_floor.py under it (pytest-floor.txt); unset, steps.txt says the step was skipped.
# $OUT gets: host.txt, nvidia-smi-q.txt + nvidia-smi-q-after.txt, telemetry.csv (0.5 s), probe.json,
#   snapshot.json, run-*.json (pth-top bench --json) or events-*.jsonl, anchor.json (tests/perf/gpu_anchor.py),
#   gpm/*.json (snapshot GPU fields sampled during a GEMM, a held context, a spin kernel, a one-rank torchrun
#   all_reduce: gpm_capture.py over gpm_workloads.py; fixtures for tests/fakes),
#   pytest-gpu.txt, pytest-floor.txt, steps.txt (rc and seconds per step), targets.json + targets.txt, SUMMARY.txt.
# On the lent H200 (2026-12-04: 410 s of steps; pytest -m gpu alone 119 s): carry pth-top's dependencies as cp312
# wheels in .whl, `pip install --no-index --no-deps .whl/*.whl && pip install --no-index --no-deps
# --no-build-isolation -e .` (editable: the repo's pth_top/ folder shadows a plain install), then
# `PYTHON=python3 bash tests/perf/gpu_check.sh /tmp/gc` and tar /tmp/gc into $OUT (8 files come back at most).
set -uo pipefail
T0=$(date +%s)
DRY_RUN=${GPU_CHECK_DRY_RUN:-0}
for arg in "$@"; do
  case $arg in
    --dry-run) DRY_RUN=1 ;;
    -*) echo "gpu_check.sh: unknown option '$arg' (usage: gpu_check.sh [--dry-run] [OUT_DIR])" >&2; exit 2 ;;
    *) OUT=$arg ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
cd "$REPO" || exit 2
OUT=${OUT:-$REPO/gpu-check-out}
mkdir -p "$OUT" || { echo "gpu_check.sh: cannot create $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
REST_KERNELS="conv2d amp_step max_batch cpu_vs_gpu disk"
OPTIONAL_KERNELS="attention fp8 e2e_step memory allreduce p2p"  # each run alone when `bench --list` has it
if [ "$DRY_RUN" = 1 ]; then  # every step once, tiny, under its own timeout only (NEED_PERCENT=0)
  BUDGET_S=${BUDGET_S:-60}; DEVICE=cpu; BURN=${BURN:-2s}; EXTRA_RUN_ARGS=${EXTRA_RUN_ARGS:---scale 0.05 --time-cap 0.1}
  REST_KERNELS=disk; OPTIONAL_KERNELS=; NEED_PERCENT=0; GPM_SAMPLES=${GPM_SAMPLES:-2}
  export ANCHOR_WARMUP_S=0.2
else
  # A 30 s burn: the H200 sat at its power cap (~692 W, 667 TFLOP/s) from the 2nd second; 5 GPM samples a capture.
  BUDGET_S=${BUDGET_S:-420}; DEVICE=${DEVICE:-cuda:0}; BURN=${BURN:-30s}; EXTRA_RUN_ARGS=${EXTRA_RUN_ARGS:-}
  NEED_PERCENT=100; GPM_SAMPLES=${GPM_SAMPLES:-5}
fi
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/pth-top-gpu-check.XXXXXX")  # disk kernel file and user folders, not in $OUT
export OUT REPO DEVICE PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export PTH_TOP_DATA_DIR="$SCRATCH/data" PTH_TOP_CONFIG_DIR="$SCRATCH/config"  # the user's runs stay untouched
: > "$OUT/steps.txt"; : > "$OUT/gpu_check.log"

elapsed() { echo $(( $(date +%s) - T0 )); }
log() { echo "[+$(elapsed)s] $*" | tee -a "$OUT/gpu_check.log" >&2; }
# step NAME MAX_S NEED_S CMD...: runs under timeout min(MAX_S, budget left - 10); skipped with fewer than NEED_S
# (never in a dry run, which checks every step).
step() {
  local name=$1 max=$2 need=$3 budget started rc
  shift 3
  budget=$(( BUDGET_S - $(elapsed) - 10 ))
  if (( NEED_PERCENT > 0 && budget < need * NEED_PERCENT / 100 )); then log "SKIP $name (${budget}s left, needs ${need}s)"; echo "$name skipped (time)" >> "$OUT/steps.txt"; return 0; fi
  (( budget > max )) && budget=$max
  # A dry run checks every step whatever the clock says, with 3x room: CI runs it on a busy machine.
  (( NEED_PERCENT == 0 )) && budget=$(( max * 3 ))
  log "RUN  $name (timeout ${budget}s)"
  started=$(date +%s)
  timeout --kill-after=10 "$budget" "$@"
  rc=$?
  log "DONE $name rc=$rc ($(( $(date +%s) - started ))s)"
  echo "$name rc=$rc wall_s=$(( $(date +%s) - started ))" >> "$OUT/steps.txt"
}
TELEMETRY_PID=
cleanup() { [ -n "$TELEMETRY_PID" ] && kill "$TELEMETRY_PID" 2>/dev/null; TELEMETRY_PID=; rm -rf "$SCRATCH"; }
trap cleanup EXIT

# 0. The machine before anything runs.
{ date -u; uname -a; nproc; free -g; df -h "$OUT"; lscpu 2>/dev/null | head -25; git -C "$REPO" log -1 --oneline; } \
  > "$OUT/host.txt" 2>&1
if command -v nvidia-smi >/dev/null 2>&1; then
  timeout 60 nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1
  timeout 30 nvidia-smi topo -m > "$OUT/nvidia-smi-topo.txt" 2>&1
  BASE=timestamp,index,pstate,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,utilization.gpu,memory.used,pcie.link.gen.current,pcie.link.width.current
  for FIELDS in $BASE,clocks_event_reasons.active $BASE,clocks_throttle_reasons.active timestamp,index,clocks.sm,power.draw,temperature.gpu; do
    timeout 20 nvidia-smi --query-gpu=$FIELDS --format=csv >/dev/null 2>&1 && break  # drivers renamed the reasons
  done
  nvidia-smi --query-gpu=$FIELDS --format=csv -lms 500 > "$OUT/telemetry.csv" 2>&1 &
  TELEMETRY_PID=$!
else
  echo "nvidia-smi not found" | tee "$OUT/nvidia-smi-q.txt" > "$OUT/telemetry.csv"
fi

# 1. An interpreter whose torch sees CUDA (a dry run takes any torch).
want='import sys, torch; ok = torch.cuda.is_available(); print(torch.__version__, torch.version.cuda, ok); sys.exit(0 if ok else 3)'
PY= ; INFO=
CANDIDATES=("${PYTHON:-}")
[ -n "${PYTHON:-}" ] || CANDIDATES=(.venv/bin/python venv/bin/python "$HOME/.venv/bin/python" /opt/conda/bin/python /usr/local/bin/python3 python3 python)
for candidate in "${CANDIDATES[@]}"; do
  command -v "$candidate" >/dev/null 2>&1 || continue
  if INFO=$(timeout 90 "$candidate" -c "$want" 2>/dev/null) || { [ "$DRY_RUN" = 1 ] && [ -n "$INFO" ]; }; then
    PY=$candidate; break
  fi
  echo "$candidate: ${INFO:-no torch}" >> "$OUT/python-candidates.txt"
done
if [ -z "$PY" ]; then
  cat > "$OUT/NEEDS.txt" <<'NEEDS'
No interpreter here has a CUDA build of torch, so nothing ran (nvidia-smi output was still saved).
Needed, already installed (the GPU machine may have no internet): torch >= 2.4 with CUDA 12.x (H100/H200 are
sm_90) and its nvidia-* runtime wheels, a driver that lists the GPU in nvidia-smi; optional: nvidia-ml-py
(clocks/power/PCIe link per result), pth-top's own dependencies (pip install -e '.[test]') for the CLI steps.
Then: PYTHON=/path/to/python OUT=... bash tests/perf/gpu_check.sh   (or --dry-run to check the script on a CPU)
NEEDS
  log "no CUDA torch found (tried: ${CANDIDATES[*]}): see $OUT/NEEDS.txt"
  exit 3
fi
log "python: $PY ($INFO); device $DEVICE; dry run $DRY_RUN"
HOST_PY=
if [ "${GPU_CHECK_CHILD_ONLY:-0}" != 1 ]; then  # 1: as on a machine with torch but not pth-top's dependencies
  for candidate in "${PTH_TOP_PYTHON:-}" "$PY" .venv/bin/python; do  # the CUDA one first: pytest -m gpu needs it
    [ -n "$candidate" ] && timeout 60 "$candidate" -c 'import pth_top.tui.cli' 2>/dev/null && { HOST_PY=$candidate; break; }
  done
fi
log "pth-top CLI: ${HOST_PY:-none (the bench child runs directly)}"
timeout 60 "$PY" -m pip freeze > "$OUT/pip-freeze.txt" 2>&1 || true
export ANCHOR_DEVICE=$DEVICE

# bench NAME MAX NEED ARGS...: pth-top bench (run-NAME.json, with % of peak) or the child alone (events-NAME.jsonl).
bench() {
  local name=$1 max=$2 need=$3
  shift 3
  if [ -n "$HOST_PY" ]; then
    step "$name" "$max" "$need" bash -c '"$0" -m pth_top.tui.cli bench --python "$1" --json --out "$OUT/run-$2.json" --force "${@:3}" > /dev/null 2> "$OUT/run-$2.stderr"' \
      "$HOST_PY" "$PY" "$name" "$@"
  else
    step "$name" "$max" "$need" bash -c '"$0" -c "$("$0" "$REPO/tests/perf/gpu_anchor.py" --print-bootstrap)" "$REPO/benches" run "${@:2}" > "$OUT/events-$1.jsonl" 2> "$OUT/events-$1.stderr"' \
      "$PY" "$name" "$@"
  fi
}
has_kernel() { grep -q "KernelSpec(\"$1\"" "$REPO/benches/catalog.py"; }

# 2. What torch sees; the GEMM and copy the targets need, then their plain-events references.
step probe 40 15 bash -c '"$0" -c "$("$0" "$REPO/tests/perf/gpu_anchor.py" --print-bootstrap)" "$REPO/benches" probe --load-seconds 3 > "$OUT/probe.json" 2> "$OUT/probe.stderr"' "$PY"
# shellcheck disable=SC2086
bench peak 150 40 --device "$DEVICE" --suite standard --kernel gemm --kernel membw --kernel h2d --disk-dir "$SCRATCH" $EXTRA_RUN_ARGS
ANCHOR_BUDGET_S=$(( BUDGET_S - $(elapsed) - 200 )); (( ANCHOR_BUDGET_S > 110 )) && ANCHOR_BUDGET_S=110; (( ANCHOR_BUDGET_S < 30 )) && ANCHOR_BUDGET_S=30
[ "$DRY_RUN" = 1 ] && ANCHOR_BUDGET_S=10
export ANCHOR_BUDGET_S
step anchor $(( ANCHOR_BUDGET_S + 30 )) $(( ANCHOR_BUDGET_S / 2 )) bash -c '"$0" "$REPO/tests/perf/gpu_anchor.py" > "$OUT/anchor.stdout" 2> "$OUT/anchor.stderr"' "$PY"

# 3. The dashboard's view, the gpu-marked tests, the burn-in and the rest of the standard suite.
if [ -n "$HOST_PY" ]; then
  step snapshot 30 10 bash -c '"$0" -m pth_top.tui.cli snapshot --json > "$OUT/snapshot.json" 2> "$OUT/snapshot.stderr"' "$HOST_PY"
  # GPM fixtures: GPM_SAMPLES samples 1 s apart once each workload is warm (a ~10 s GEMM on the GPU).
  export GPM_WORKLOAD_MAX_S=90
  gpm() { local name=$1; shift; step "gpm-$name" 60 20 "$HOST_PY" "$HERE/gpm_capture.py" "$name" --samples "$GPM_SAMPLES" -- "$@"; }
  WORKLOADS=$HERE/gpm_workloads.py
  gpm gemm "$PY" "$WORKLOADS" gemm
  gpm idle-context "$PY" "$WORKLOADS" idle
  gpm spin-kernel "$PY" "$WORKLOADS" spin
  # torchrun leaves a torchelastic_* folder in TMPDIR: the scratch folder, removed at exit.
  gpm torchrun-allreduce env TMPDIR="$SCRATCH" "$PY" -m torch.distributed.run --standalone --nproc_per_node 1 \
    "$WORKLOADS" allreduce
  if [ "$DRY_RUN" = 1 ]; then
    echo "pytest-gpu skipped (dry run)" >> "$OUT/steps.txt"
  else
    step pytest-gpu 160 60 bash -c '"$0" -m pytest -m gpu -q -p no:cacheprovider tests > "$OUT/pytest-gpu.txt" 2>&1' "$HOST_PY"
  fi
else
  echo "snapshot, gpm, pytest-gpu, burn and accept skipped (no interpreter with pth-top's dependencies)" >> "$OUT/steps.txt"
fi
[ -n "$HOST_PY" ] && has_kernel burn && bench burn 100 30 --device "$DEVICE" --burn "$BURN"
# shellcheck disable=SC2046,SC2086
bench standard-rest 150 45 --device "$DEVICE" --suite standard $(printf -- '--kernel %s ' $REST_KERNELS) \
  --disk-dir "$SCRATCH" $EXTRA_RUN_ARGS
# shellcheck disable=SC2086
for kernel in $OPTIONAL_KERNELS; do
  has_kernel "$kernel" && bench "$kernel" 90 20 --device "$DEVICE" --suite standard --kernel "$kernel" $EXTRA_RUN_ARGS
done
[ "$DRY_RUN" = 1 ] && echo "optional kernels, accept and mamf skipped (dry run)" >> "$OUT/steps.txt"
if [ "$DRY_RUN" = 0 ] && [ -n "$HOST_PY" ] && "$HOST_PY" -m pth_top.tui.cli bench --help 2>/dev/null | grep -q -- "--accept"; then
  bench accept 120 45 --device "$DEVICE" --accept --burn "$BURN" --cpu-memory-budget-mib 64
fi
if [ -n "${PTH_TOP_FLOOR_PYTHON:-}" ] && [ -n "$HOST_PY" ]; then  # the test reads the variable itself
  step torch-floor 150 40 bash -c '"$0" -m pytest -q -p no:cacheprovider --basetemp "$1" tests/bench/test_torch_floor.py > "$OUT/pytest-floor.txt" 2>&1' \
    "$HOST_PY" "$SCRATCH/pytest-floor"
else
  echo "torch-floor skipped (PTH_TOP_FLOOR_PYTHON not set, or no interpreter with pth-top)" >> "$OUT/steps.txt"
fi
# shellcheck disable=SC2086
[ "$DRY_RUN" = 0 ] && has_kernel mamf && bench mamf 200 60 --device "$DEVICE" --suite standard --kernel mamf $EXTRA_RUN_ARGS

# 4. The machine after, the targets, the summary.
command -v nvidia-smi >/dev/null 2>&1 && timeout 30 nvidia-smi -q > "$OUT/nvidia-smi-q-after.txt" 2>&1
[ -n "$TELEMETRY_PID" ] && kill "$TELEMETRY_PID" 2>/dev/null; TELEMETRY_PID=
timeout 30 "${HOST_PY:-$PY}" "$HERE/check_gpu_targets.py" "$OUT" > "$OUT/targets.txt" 2>&1
TARGETS_RC=$?
{
  echo "gpu_check.sh $(date -u +%FT%TZ): python $PY ($INFO), device $DEVICE, dry run $DRY_RUN, $(elapsed)s of ${BUDGET_S}s"
  grep -m1 "Product Name" "$OUT/nvidia-smi-q.txt" 2>/dev/null
  echo "== targets (check_gpu_targets.py rc=$TARGETS_RC)"; cat "$OUT/targets.txt"
  echo "== steps"; cat "$OUT/steps.txt"
  for stderr in "$OUT"/run-*.stderr "$OUT"/events-*.stderr; do
    [ -s "$stderr" ] && { echo "== $(basename "$stderr") (last lines)"; tail -n 5 "$stderr"; }
  done
  [ -f "$OUT/pytest-gpu.txt" ] && { echo "== pytest -m gpu"; tail -n 3 "$OUT/pytest-gpu.txt"; }
  [ -f "$OUT/pytest-floor.txt" ] && { echo "== torch floor ($PTH_TOP_FLOOR_PYTHON)"; tail -n 3 "$OUT/pytest-floor.txt"; }
} > "$OUT/SUMMARY.txt" 2>&1
log "finished in $(elapsed)s; summary in $OUT/SUMMARY.txt"
cat "$OUT/SUMMARY.txt"
exit "$TARGETS_RC"
