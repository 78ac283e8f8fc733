#!/usr/bin/env bash
# Runs every fuzz target of a -DPTDSIM_FUZZ=ON build for SECONDS each (default 45), JOBS at a time
# (default: the CPU count), over its seeds, the regressions in tests/data/fuzz/<target>/ and what
# earlier runs of the same build found. A crash, a sanitizer report, a leak, a unit over 10 s or
# over 2 GB fails the run with the input saved as BUILD/fuzz/artifacts/<target>-crash-* (or
# -timeout-, -leak-, -oom-); once fixed, add it to tests/data/fuzz/<target>/ (tests/fuzz/README.md).
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR [SECONDS] [JOBS]}" && pwd)
seconds=${2:-45}
jobs=${3:-$(nproc)}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$build/fuzz/artifacts"

# One target; its log in BUILD/fuzz/<target>.log, its exit status libFuzzer's.
fuzz_one() {
  local name=$1 dict=${2:-}
  local corpus=("$build/fuzz/corpus/$name" "$build/fuzz/seeds/$name")
  mkdir -p "${corpus[0]}"
  [ -d "$src/tests/data/fuzz/$name" ] && corpus+=("$src/tests/data/fuzz/$name")
  local opts=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$build/fuzz/artifacts/$name-")
  [ -n "$dict" ] && opts+=(-dict="$src/$dict")
  "$build/bin/fuzz_$name" "${opts[@]}" "${corpus[@]}" </dev/null >"$build/fuzz/$name.log" 2>&1
}

names=()
while read -r name dict; do
  [ -n "$name" ] || continue
  names+=("$name")
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  echo "+ fuzz_$name for ${seconds}s"
  fuzz_one "$name" "${dict:-}" &
done < "$build/fuzz/targets.txt"
wait || true

failed=0
for name in "${names[@]}"; do
  log="$build/fuzz/$name.log"
  if grep -q '^Done' "$log"; then
    echo "fuzz_$name: $(grep '^Done' "$log"), peak RSS $(grep '^stat::peak_rss_mb' "$log" | awk '{print $2}') MB"
  else
    tail -n 60 "$log" >&2
    echo "fuzz_$name found a problem; the input is in $build/fuzz/artifacts/, the log in $log" >&2
    failed=1
  fi
done
exit "$failed"
