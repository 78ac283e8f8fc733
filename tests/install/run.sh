#!/usr/bin/env bash
# The installed ptdsim (issue 40), run by ctest: `cmake --install BUILD --prefix P` into a fresh
# prefix; a consumer project (consumer/) configured with find_package(ptdsim) against P alone,
# built, printing the default scenario's step time, which must equal the CLI's to every digit; the
# installed CLI evaluating the shipped default scenario from outside the source tree, by a shipped
# name it can only find in P/share/ptdsim; and, where built, the installed Python module.
# Usage: run.sh BUILD_DIR [PYTHON]; works in a temporary folder outside the source tree.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
python=${2:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/ptdsim-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

# Nothing of the source or build tree from here on: run from an empty folder, no $PTDSIM_DATA.
unset PTDSIM_DATA
cd "$work"
cmake -S "$src/tests/install/consumer" -B consumer -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build consumer >/dev/null
scenario=$prefix/share/ptdsim/scenarios/default.yaml
consumer=$(./consumer/step_time "$scenario")
cli=$("$prefix/bin/ptdsim" evaluate "$scenario" --format json |
      "${python:-python3}" -c 'import json, sys; print(repr(json.load(sys.stdin)["time"]["step_s"]))')
echo "consumer step_s $consumer, installed CLI step_s $cli"
"${python:-python3}" -c "import sys; sys.exit(0 if float('$consumer') == float('$cli') else 1)"

# The installed data is found beside the installed binary: a model only the prefix has.
cp "$prefix/share/ptdsim/models/gpt3-175b.yaml" "$prefix/share/ptdsim/models/only-installed.yaml"
"$prefix/bin/ptdsim" evaluate "$scenario" --set model=only-installed >/dev/null
"$prefix/bin/ptdsim" validate --split holdout >/dev/null

if [ -n "$python" ]; then
  site=$(find "$prefix" -name __init__.py -path '*ptdsim/__init__.py' -printf '%h\n' | head -1)
  PYTHONPATH=$(dirname "$site") "$python" -c "
import ptdsim, sys
assert ptdsim.__file__.startswith('$prefix'), ptdsim.__file__
assert 'only-installed' in ptdsim.models(), ptdsim.models()
step = ptdsim.evaluate('default', {'model': 'only-installed'})['time']['step_s']
sys.exit(0 if step == float('$cli') else 1)"
fi
echo "installed ptdsim: ok"
