#!/bin/sh
# make gpu-test, and the GPU bundle's run.sh: every GPU check, in order -
#   kernels.sh    the trainer's kernels against their CPU twins
#   trainer.sh    CUDA trainer against the CPU trainer; speed against
#                 PyTorch and the simulator
#   calibrate.sh  scaleplan calibrate --quick; rates against PyTorch
# (or the ones named as arguments). Each gets SCALEPLAN_BIN and an empty
# work directory in GPU_TEST_DIR, prints what it measured, and exits
# non-zero on a correctness failure (wrong gradients, losses or kernel
# outputs, a crash, a missing part) or on a speed or accuracy limit set
# from the measured runs (docs/gpu-runs/; each script says which); the
# targets no measured run has met yet are recorded, and gate only with
# GPU_TEST_GATE_PERF=1. Results go under
# GPU_TEST_OUT (default gpu-results/), from where they are committed with
# the command that made them.
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
checks=${*:-kernels trainer calibrate}
failed=0 summary=""
for c in $checks; do
    t=tests/gpu/$c.sh
    if [ ! -f "$t" ]; then
        echo "gpu-test: no check $t" >&2
        failed=$((failed + 1))
        continue
    fi
    dir=$(mktemp -d)
    echo "== $t"
    t0=$(date +%s)
    if GPU_TEST_DIR="$dir" sh "$t"; then
        r="PASS $c ($(($(date +%s) - t0)) s)"
    else
        r="FAIL $c ($(($(date +%s) - t0)) s)"
        failed=$((failed + 1))
    fi
    echo "-- $r"
    summary="$summary$r
"
    rm -rf "$dir"
done
printf '%s' "$summary" >"$GPU_TEST_OUT/summary.txt"
if [ "$failed" -ne 0 ]; then
    echo "gpu-test: $failed check(s) failed; results in $GPU_TEST_OUT" >&2
    exit 1
fi
echo "gpu-test: all passed; results in $GPU_TEST_OUT"
