#!/bin/sh
# Assemble the GPU bundle (make gpu-bundle): one folder to copy to a GPU
# machine that has the NVIDIA driver, CUDA/NCCL libraries (a toolkit or
# PyTorch's pip wheels) and Python, and nothing else of ours:
#   run.sh            the entry script (tests/gpu/bundle/run.sh)
#   bin/              scaleplan, scaleplan-cuda.so, kernels_test(_small)
#                     from the bundle's build folder
#   lib/              the shared libraries that cannot be linked statically
#                     (libcjson.so.1: Debian ships no static cJSON)
#   tests/gpu/        the GPU checks; tests/fixtures/ the inputs they read
#   BUILD.txt         commit, settings, what each binary needs from the system
#   sh tests/gpu/bundle/make.sh BUILD_DIR OUT_DIR
set -eu
build=${1:?usage: make.sh BUILD_DIR OUT_DIR}
out=${2:?usage: make.sh BUILD_DIR OUT_DIR}
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/tests/gpu" "$out/tests/fixtures"
for f in scaleplan scaleplan-cuda.so; do
    cp "$build/bin/$f" "$out/bin/"
done
cp "$build/tests/gpu/kernels_test" "$build/tests/gpu/kernels_test_small" "$out/bin/"
# the shared libraries the binaries need that are neither the C runtime
# nor CUDA's (found at run time): copied next to them (RUNPATH $ORIGIN/../lib)
for f in "$out"/bin/*; do
    ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
    case "$name" in
    libc.so.* | libm.so.* | libdl.so.* | librt.so.* | libpthread.so.* | ld-linux* | \
        libgcc_s.so.* | libstdc++.so.* | libcublasLt.so.* | libnccl.so.* | libcuda.so.*) ;;
    *) cp -L "$path" "$out/lib/$name" ;;
    esac
done
cp tests/gpu/bundle/run.sh "$out/run.sh"
cp tests/gpu/run.sh tests/gpu/kernels.sh tests/gpu/trainer.sh tests/gpu/calibrate.sh tests/gpu/kernel_times.sh \
    tests/gpu/*.py "$out/tests/gpu/"
cp -r tests/fixtures/configs tests/fixtures/validation "$out/tests/fixtures/"
{
    echo "scaleplan GPU bundle"
    echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "build: $("$out/bin/scaleplan" --version 2>&1)"
    echo "settings:"
    for s in "$build"/settings/*; do echo "  $(basename "$s"): $(cat "$s")"; done
    echo "newest glibc and libstdc++ symbol versions each binary needs (the machine must have them):"
    for f in "$out"/bin/*; do
        v=$(objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -t. -k2,2n -k3,3n -u | tail -n 1)
        x=$(objdump -T "$f" 2>/dev/null | grep -o 'GLIBCXX_[0-9.]*' | sort -t. -k2,2n -k3,3n -k4,4n -u | tail -n 1)
        echo "  $(basename "$f"): ${v:-none}${x:+, $x}"
    done
    echo "shared libraries each binary names (readelf NEEDED):"
    for f in "$out"/bin/* "$out"/lib/*; do
        echo "  $(basename "$f"): $(readelf -d "$f" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
    done
    echo "GPU code in scaleplan-cuda.so (entries of its fat binary, one per .cu file):"
    python3 tests/gpu/bundle/fatbin.py "$out/bin/scaleplan-cuda.so" | sed 's/^/  /'
} >"$out/BUILD.txt"
echo "gpu-bundle: $out ($(du -sh "$out" | cut -f1)); copy it to a GPU machine and run: sh $out/run.sh OUT_DIR"
