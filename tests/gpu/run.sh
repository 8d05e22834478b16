#!/bin/sh
# make gpu-test: every GPU check in tests/gpu/*.sh (other than this file),
# in name order. Each script gets SCALEPLAN_BIN and an empty work directory
# in GPU_TEST_DIR, prints what it measured, and exits non-zero on failure.
# Measured results worth keeping are written under GPU_TEST_OUT (default
# gpu-results/), from where they are committed with the command that made
# them.
set -u
cd "$(dirname "$0")/../.."
: "${SCALEPLAN_BIN:=$PWD/bin/scaleplan}"
: "${GPU_TEST_OUT:=$PWD/gpu-results}"
export SCALEPLAN_BIN GPU_TEST_OUT
mkdir -p "$GPU_TEST_OUT"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu-test: no NVIDIA GPU visible (nvidia-smi -L failed); these tests need one" >&2
    exit 1
fi
nvidia-smi -L
failed=0
for t in tests/gpu/*.sh; do
    [ "$(basename "$t")" = run.sh ] && continue
    dir=$(mktemp -d)
    echo "== $t"
    if GPU_TEST_DIR="$dir" sh "$t"; then
        echo "-- PASS $t"
    else
        echo "-- FAIL $t"
        failed=$((failed + 1))
    fi
    rm -rf "$dir"
done
if [ "$failed" -ne 0 ]; then
    echo "gpu-test: $failed script(s) failed" >&2
    exit 1
fi
echo "gpu-test: all passed; results in $GPU_TEST_OUT"
