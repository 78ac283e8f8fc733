#!/usr/bin/env bash
# Measure one node's GPUs with both tools and keep everything in one directory
# (docs/calibration.md "One node in one go"):
#   1. nvidia-smi's view of the GPUs, before and after (clocks, power, temperature);
#   2. the [gpu] tests: ptdsim-calibrate's self-check, and its bf16 GEMM rates against cuBLAS on
#      random data for the 24 shapes of calibrate/data/h100/gemm_random_vs_constant.csv;
#   3. ptdsim-calibrate: collectives over the node's GPUs, GEMMs, copy, launch and contention, written
#      as kernel tables and as a hardware file copied from BASE;
#   4. measure_kernels.py: attention, norms and activations, cross-entropy and AdamW (PyTorch);
#   5. the comparison of those tables with calibrate/data/h100, and `ptdsim calibrate import-kernels`
#      of every table into OUT_DIR/node.yaml, the node's hardware file.
#
# usage: calibrate/measure_node.sh OUT_DIR [BUILD_DIR [BASE]]
#   BUILD_DIR  where ptdsim, ptdsim-calibrate and ptdsim_calibrate_tests were built (default build)
#   BASE       hardware file the calibrated copy starts from (default hardware/dgx-h100.yaml)
# Environment: CALIBRATE_ARGS, more ptdsim-calibrate options (e.g. "--algos 4 --batch-ms 10" for a
# shorter run); KERNELS_ARGS, more measure_kernels.py options; STEP_S_TESTS, STEP_S_CALIBRATE,
# STEP_S_KERNELS, each step's time limit in seconds (a step that runs over is stopped and the next one
# runs, so that a machine held for a fixed time returns what finished).
# Each step's output goes to OUT_DIR/STEP.log; its exit status is printed. Exit status: 0 when every
# step exited 0, 1 when one did not, 2 for bad arguments (a BUILD_DIR without the tools, no BASE).
set -u
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT_DIR [BUILD_DIR [BASE]]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
# every path made absolute here: the steps run inside OUT_DIR
absolute() { (cd "$(dirname "$1")" 2>/dev/null && echo "$(pwd)/$(basename "$1")"); }
base=$(absolute "${3:-$root/hardware/dgx-h100.yaml}")
if [ -z "$base" ] || [ ! -f "$base" ]; then
  echo "$0: error: BASE ${3:-} is not a file" >&2
  exit 2
fi
if ! build=$(cd "${2:-$root/build}" 2>/dev/null && pwd); then
  echo "$0: error: BUILD_DIR ${2:-$root/build} is not a directory" >&2
  exit 2
fi
for tool in ptdsim ptdsim-calibrate ptdsim_calibrate_tests; do
  if [ ! -x "$build/bin/$tool" ]; then
    echo "$0: error: $build/bin/$tool is missing: build ptdsim with the CUDA toolkit and NCCL first" >&2
    exit 2
  fi
done
mkdir -p "$1"
out=$(cd "$1" && pwd)
failed=0

step() {  # step NAME SECONDS COMMAND...: runs the command in OUT_DIR under a time limit
  local name=$1 secs=$2 start rc
  shift 2
  echo "== $name (at most ${secs} s): $*"
  start=$(date +%s)
  # timeout signals the step's whole process group (std::system's children, Python's too), and
  # kills it 30 s later if it is still there
  (cd "$out" && timeout -k 30 "$secs" "$@") >"$out/$name.log" 2>&1
  rc=$?
  echo "== $name: exit $rc after $(($(date +%s) - start)) s$( { [ $rc = 124 ] || [ $rc = 137 ]; } && echo ' (time limit)')"
  [ $rc = 0 ] || failed=1
  tail -n 30 "$out/$name.log"
}

gpu_state() { nvidia-smi -q -d CLOCK,POWER,TEMPERATURE,PERFORMANCE >"$out/nvidia-smi-$1.txt" 2>&1; }
nvidia-smi >"$out/nvidia-smi.txt" 2>&1 && head -n 20 "$out/nvidia-smi.txt"
gpu_state before
step gpu-tests "${STEP_S_TESTS:-300}" "$build/bin/ptdsim_calibrate_tests" "[gpu]"
rm -f "$out/calibrated.yaml"  # (a file a previous run left must not stand in for this one's)
# shellcheck disable=SC2086  # CALIBRATE_ARGS is a list of options
step ptdsim-calibrate "${STEP_S_CALIBRATE:-3600}" "$build/bin/ptdsim-calibrate" --base "$base" \
  -o "$out/calibrated.yaml" --tables "$out" --models "$root/models" ${CALIBRATE_ARGS:-}
# shellcheck disable=SC2086
step measure-kernels "${STEP_S_KERNELS:-1800}" env PYTHONUNBUFFERED=1 python3 "$root/calibrate/measure_kernels.py" \
  --out "$out" ${KERNELS_ARGS:-}
gpu_state after
step compare 60 python3 "$root/calibrate/measure_kernels.py" --compare "$out" "$root/calibrate/data/h100"
# every table fitted into one hardware file: ptdsim-calibrate's copy of BASE (its collectives, copy
# and launch figures) with the gpu.kernels section of this node
calibrated=$out/calibrated.yaml
[ -f "$calibrated" ] || calibrated=$base
step import 60 "$build/bin/ptdsim" calibrate import-kernels "$out" --base "$calibrated" -o "$out/node.yaml"
exit $failed
