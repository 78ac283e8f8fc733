#!/usr/bin/env bash
# Runs every fuzz target of a -DPTDSIM_FUZZ=ON build for SECONDS each (default 45) over its seeds,
# the regressions in tests/data/fuzz/<target>/ and what earlier runs of the same build found.
# A crash, a sanitizer report, a leak, a unit over 10 s or over 2 GB stops with the input saved as
# BUILD/fuzz/artifacts/<target>-crash-*; add it to tests/data/fuzz/<target>/ as a regression once
# fixed (tests/fuzz/README.md).
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR [SECONDS]}" && pwd)
seconds=${2:-45}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$build/fuzz/artifacts"
while read -r name dict; do
  [ -n "$name" ] || continue
  corpus=("$build/fuzz/corpus/$name" "$build/fuzz/seeds/$name")
  mkdir -p "${corpus[0]}"
  [ -d "$src/tests/data/fuzz/$name" ] && corpus+=("$src/tests/data/fuzz/$name")
  opts=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$build/fuzz/artifacts/$name-")
  [ -n "${dict:-}" ] && opts+=(-dict="$src/$dict")
  echo "+ fuzz_$name for ${seconds}s"
  log="$build/fuzz/$name.log"
  if "$build/bin/fuzz_$name" "${opts[@]}" "${corpus[@]}" </dev/null >"$log" 2>&1; then
    grep -e '^Done' -e '^stat::number_of_executed_units' -e '^stat::peak_rss_mb' "$log" || true
  else
    tail -n 60 "$log" >&2
    echo "fuzz_$name found a problem; the input is in $build/fuzz/artifacts/, the log in $log" >&2
    exit 1
  fi
done < "$build/fuzz/targets.txt"
