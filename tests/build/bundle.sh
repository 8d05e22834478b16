#!/bin/sh
# The GPU bundle is self-contained and fails cleanly without a GPU (make
# check-bundle, part of make test):
#   1. no binary or plug-in in it names MPI, GSL, the OpenMP runtime or any
#      other library outside a short list every Linux with the NVIDIA stack
#      has (the C runtime, libstdc++, libgcc_s) and the two CUDA libraries
#      found at run time (libcublasLt.so.13, libnccl.so.2); what it ships in
#      lib/ resolves there (ldd);
#   2. the plug-in carries machine code for sm_80, sm_90 and sm_100 and
#      compute_100 PTX for every .cu file (so a newer GPU compiles the PTX
#      instead of failing with "no kernel image");
#   3. scaleplan in it runs the CPU paths here with only that;
#   4. on a machine without a GPU, its run.sh stops with exactly one line,
#      "run.sh: no GPU ...", exit 1, and writes nothing.
#   sh tests/build/bundle.sh BUNDLE_DIR
set -u
b=${1:?usage: bundle.sh BUNDLE_DIR}
fail=0
say() { echo "bundle: $*"; }
bad() {
    say "FAIL: $*"
    fail=1
}
[ -x "$b/bin/scaleplan" ] && [ -f "$b/bin/scaleplan-cuda.so" ] && [ -f "$b/run.sh" ] ||
    { say "FAIL: $b is not a built bundle (make gpu-bundle)"; exit 1; }

shipped=$(ls "$b/lib" 2>/dev/null | tr '\n' ' ')
for f in "$b"/bin/* "$b"/lib/*; do
    [ -f "$f" ] || continue
    needed=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
    for n in $needed; do
        case "$n" in
        libc.so.* | libm.so.* | libdl.so.* | librt.so.* | libpthread.so.* | ld-linux-x86-64.so.* | \
            libgcc_s.so.* | libstdc++.so.* | libcublasLt.so.13 | libnccl.so.2) ;;
        *)
            case " $shipped " in
            *" $n "*) ;;
            *) bad "$(basename "$f") needs $n, which is neither shipped in lib/ nor on every GPU machine" ;;
            esac
            ;;
        esac
    done
    # what ldd resolves: shipped ones inside the bundle, nothing from MPI or GSL
    ldd "$f" 2>/dev/null | grep -E 'libmpi|libgsl|libgomp|libopen-|libcudart' &&
        bad "$(basename "$f") loads MPI, GSL, OpenMP or the CUDA runtime from the system"
    libdir=$(cd "$b/lib" && pwd -P)
    for s in $shipped; do
        at=$(ldd "$f" 2>/dev/null | awk -v s="$s" '$1 == s && $2 == "=>" { print $3 }')
        [ -z "$at" ] && continue
        [ "$(readlink -f "$at")" = "$libdir/$s" ] ||
            bad "$(basename "$f") resolves $s to $at, outside the bundle's lib/"
    done
done
[ "$fail" = 0 ] && say "ldd/readelf: nothing from MPI, GSL or OpenMP; needs only the C runtime, libstdc++, libgcc_s, libcublasLt.so.13 and libnccl.so.2 at run time, plus lib/: ${shipped:-nothing}"

# the GPU code: every .cu file for every architecture, and PTX
here=$(cd "$(dirname "$0")/../.." && pwd)
n_cu=$(ls "$here"/calibrate/*.cu "$here"/trainer/*.cu | wc -l)
code=$(python3 "$here/tests/gpu/bundle/fatbin.py" "$b/bin/scaleplan-cuda.so")
for want in "sm_80 machine code: $n_cu" "sm_90 machine code: $n_cu" "sm_100 machine code: $n_cu" \
    "compute_100 PTX: $n_cu"; do
    echo "$code" | grep -qx "$want" || bad "scaleplan-cuda.so lacks '$want' (has: $(echo "$code" | tr '\n' ';'))"
done
[ "$fail" = 0 ] && say "GPU code: sm_80, sm_90, sm_100 machine code and compute_100 PTX for each of the $n_cu .cu files"

# the CPU paths run from the bundle alone
if ! v=$("$b/bin/scaleplan" --version 2>&1); then
    bad "bin/scaleplan --version: $v"
fi
case "$v" in *"no MPI"*"static"*) ;; *) bad "bin/scaleplan --version says: $v (want no MPI, static)" ;; esac
# (a layout that fits an 80 GB GPU: the check is that the static binary runs)
if ! e=$("$b/bin/scaleplan" sim --model llama3-8b --gpu h100-sxm --gpus 8 --tp 2 \
        --distributed-optimizer --json 2>&1 >/dev/null); then
    bad "bin/scaleplan sim failed: $e"
fi
say "$v"

# without a GPU: one line, exit 1, nothing written
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    say "this machine has a GPU: the no-GPU stop of run.sh is not checked here"
else
    tmp=$(mktemp -d) || exit 1
    sh "$b/run.sh" "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    lines=$(cat "$tmp/stdout" "$tmp/stderr" | wc -l)
    first=$(cat "$tmp/stderr")
    [ "$rc" = 1 ] || bad "run.sh without a GPU exited $rc (want 1)"
    [ "$lines" = 1 ] || bad "run.sh without a GPU printed $lines lines (want 1): $(cat "$tmp/stdout" "$tmp/stderr")"
    case "$first" in "run.sh: no GPU"*) ;; *) bad "run.sh without a GPU said: $first" ;; esac
    [ -e "$tmp/out" ] && bad "run.sh without a GPU created its output folder"
    [ "$fail" = 0 ] && say "run.sh here (no GPU): exit $rc, one line: $first"
    rm -rf "$tmp"
fi
exit $fail
