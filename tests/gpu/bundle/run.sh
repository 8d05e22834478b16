#!/bin/sh
# The GPU bundle's entry script (make gpu-bundle copies it to gpu-bundle/run.sh).
#
#   sh gpu-bundle/run.sh OUT_DIR [CHECK...]
#
# On a machine with an NVIDIA GPU: finds the CUDA libraries the plug-in
# needs (libcublasLt.so.13, libnccl.so.2) in LD_LIBRARY_PATH, the loader's
# cache, a CUDA toolkit or Python's pip wheels (site-packages/nvidia/*/lib),
# records the machine, runs every GPU check (tests/gpu/run.sh: kernels,
# trainer, calibrate, or the CHECKs named) and packs every result, log and
# the summary into one archive in OUT_DIR:
#   OUT_DIR/scaleplan-gpu-results-HOST-DATE.tar.gz
# Exit 0 when every check passed, 1 when one failed (the archive is written
# either way), 2 on bad usage. Without a GPU it stops at once with one line
# ("run.sh: no GPU ...") and runs nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "usage: sh run.sh OUT_DIR [kernels] [trainer] [calibrate]" >&2
    exit 2
fi
out_dir=$1
shift
checks=${*:-kernels trainer calibrate}

# ------------------------------------------------------------ a GPU at all?
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "run.sh: no GPU: nvidia-smi not found (no NVIDIA driver here); nothing was run" >&2
    exit 1
fi
if ! gpus=$(nvidia-smi -L 2>&1) || ! echo "$gpus" | grep -q '^GPU '; then
    echo "run.sh: no GPU: nvidia-smi -L lists none ($(echo "$gpus" | head -n 1)); nothing was run" >&2
    exit 1
fi

mkdir -p "$out_dir" || exit 1
out_dir=$(cd "$out_dir" && pwd)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
name=scaleplan-gpu-results-$(hostname 2>/dev/null | tr -c 'A-Za-z0-9.\n-' '_')-$stamp
work=$(mktemp -d) || exit 1
res=$work/$name
mkdir -p "$res"
log=$res/run.log
say() { echo "$*" | tee -a "$log"; }

# ------------------------------------------------------------ libraries
# The folders holding a library file named $1: LD_LIBRARY_PATH, the
# loader's cache, CUDA toolkits, Python's nvidia wheels and torch.
candidates() {
    echo "${LD_LIBRARY_PATH:-}" | tr ':' '\n'
    ldconfig -p 2>/dev/null | awk -v f="$1" '$1 == f { print $NF }' | xargs -r -n1 dirname
    for d in "${CUDA_HOME:-}" /usr/local/cuda /usr/local/cuda-*; do
        [ -n "$d" ] && echo "$d/lib64" && echo "$d/lib"
    done
    for py in python3 python; do
        command -v "$py" >/dev/null 2>&1 || continue
        "$py" - "$1" 2>/dev/null <<'EOF'
import os, sys
roots = []
try:
    import nvidia
    roots += list(nvidia.__path__)
except Exception:
    pass
try:
    import torch
    roots.append(os.path.join(os.path.dirname(torch.__file__), "lib"))
except Exception:
    pass
for r in roots:
    for d, _, files in os.walk(r):
        if sys.argv[1] in files:
            print(d)
EOF
        break
    done
}

lib_dirs=""
for lib in libcublasLt.so.13 libnccl.so.2; do
    found=""
    for d in $(candidates "$lib"); do
        [ -n "$d" ] && [ -e "$d/$lib" ] && { found=$d; break; }
    done
    if [ -n "$found" ]; then
        say "library $lib: $found/$lib"
        case ":$lib_dirs:" in *":$found:"*) ;; *) lib_dirs=${lib_dirs:+$lib_dirs:}$found ;; esac
    else
        say "library $lib: NOT FOUND (set LD_LIBRARY_PATH to its folder); the checks that need it will fail"
    fi
done
export LD_LIBRARY_PATH="$here/lib${lib_dirs:+:$lib_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ------------------------------------------------------------ the machine
{
    echo "== bundle"
    cat "$here/BUILD.txt" 2>/dev/null
    echo "== machine"
    uname -a
    ldd --version 2>&1 | head -n 1
    echo "$gpus"
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit --format=csv 2>&1
    nvidia-smi 2>&1 | head -n 15
    command -v python3 >/dev/null 2>&1 && python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' 2>&1
    command -v mpirun >/dev/null 2>&1 && mpirun --version 2>&1 | head -n 1
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    echo "== what the binaries load here"
    for f in "$here"/bin/*; do
        echo "-- $(basename "$f")"
        ldd "$f" 2>&1
    done
} >"$res/machine.txt" 2>&1

if ! version=$("$here/bin/scaleplan" --version 2>&1); then
    say "run.sh: bin/scaleplan does not start here: $(echo "$version" | head -n 2 | tr '\n' ' ')"
    say "(see machine.txt: the glibc this machine has against the one BUILD.txt says the bundle needs)"
    version="(does not start)"
fi
say "scaleplan: $version"
say "GPUs: $(echo "$gpus" | tr '\n' ';')"
say "checks: $checks"

# ------------------------------------------------------------ the checks
cd "$here" || exit 1
SCALEPLAN_BIN=$here/bin/scaleplan KERNELS_TEST=$here/bin/kernels_test \
    KERNELS_TEST_SMALL=$here/bin/kernels_test_small GPU_TEST_OUT=$res PYTHONUNBUFFERED=1 \
    sh tests/gpu/run.sh $checks 2>&1 | tee -a "$log"
status=$(grep -c '^-- FAIL' "$log")
grep -q '^-- PASS\|^-- FAIL' "$log" || status=1 # nothing ran at all

# ------------------------------------------------------------ the archive
tar czf "$out_dir/$name.tar.gz" -C "$work" "$name" || {
    echo "run.sh: could not write $out_dir/$name.tar.gz" >&2
    exit 1
}
rm -rf "$work"
echo "run.sh: results in $out_dir/$name.tar.gz ($([ "$status" = 0 ] && echo 'every check passed' || echo "$status check(s) failed"))"
[ "$status" = 0 ]
