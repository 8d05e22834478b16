#!/bin/sh
# GPU check of the trainer's kernels (tests/gpu/kernels_test.c), run by
# tests/gpu/run.sh: every launcher against its cpu_ops twin in fp32 and
# bf16 on ragged sizes, then the build with a 2-entry GEMM cache and the
# bias never fused (--small), so the cache-full and separate-bias paths run.
# A tensor outside its tolerance fails (correctness); each prints its worst
# error over the allowed one, so the tolerances can be set from these
# numbers. Environment: KERNELS_TEST, KERNELS_TEST_SMALL (the two builds),
# GPU_TEST_OUT (results: kernels/*.txt).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${KERNELS_TEST:=$PWD/build/tests/gpu/kernels_test}"
: "${KERNELS_TEST_SMALL:=$PWD/build/tests/gpu/kernels_test_small}"
OUT=${GPU_TEST_OUT:-$PWD/gpu-results}/kernels
mkdir -p "$OUT"
failed=0
for t in "$KERNELS_TEST" "$KERNELS_TEST_SMALL --small"; do
    set -- $t
    name=$(basename "$1")
    if [ ! -x "$1" ]; then
        echo "kernels.sh: $1 not built (make $1)"
        failed=1
        continue
    fi
    echo "\$ $*" >"$OUT/$name.txt"
    t0=$(date +%s)
    "$@" >>"$OUT/$name.txt" 2>&1
    rc=$?
    echo "exit $rc after $(($(date +%s) - t0)) s" >>"$OUT/$name.txt"
    grep -E '^(FAIL|kernels_test|gemm paths)' "$OUT/$name.txt"
    [ $rc -eq 0 ] || failed=1
done
exit $failed
