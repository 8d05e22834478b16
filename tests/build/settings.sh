#!/bin/sh
# The build settings are recorded and a change rebuilds what it affects
# (make check runs this after the default build):
#   1. `make MPI=0` after the build: no MPI plug-in, nothing that loads
#      libmpi (ldd of the binary and every plug-in), --version says "no MPI",
#      a launched 2-rank job stops with one line; only the few files that
#      read the MPI setting recompile (common/dist.c, api/scaleplan.c), not the
#      simulator.
#   2. `make CUDA=0` likewise for the CUDA plug-in (skipped without nvcc).
#   3. `make` with the first settings again: the plug-ins are back.
#   4. What make would do (make -n) after an OPT change: every C file, no
#      .cu file; after a GPU_ARCH change: every .cu file, and no C file but
#      the few that print the build's features.
# It works on a copy of the tree and of its build folder, so the real build
# is untouched.
#   sh tests/build/settings.sh MAKE BUILD BIN
set -u
MAKE_CMD=${1:-make}
BUILD=${2:-build}
BIN=${3:-bin/scaleplan}
root=$(cd "$(dirname "$0")/../.." && pwd)
bindir=$(dirname "$BIN")
fail=0
say() { echo "settings: $*"; }
bad() {
    say "FAIL: $*"
    fail=1
}

if [ ! -x "$root/$BIN" ]; then
    say "FAIL: $BIN is not built"
    exit 1
fi
features=$("$root/$BIN" --version)
case "$features" in
*"MPI plug-in"*) have_mpi=1 ;;
*) have_mpi=0 ;;
esac
case "$features" in
*"CUDA plug-in"*) have_cuda=1 ;;
*) have_cuda=0 ;;
esac

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# the sources (not other build folders), then this build with its timestamps
(cd "$root" && tar cf - --exclude=./.git --exclude='./build*' --exclude=./bin \
    --exclude=./gpu-bundle --exclude=./demo-report --exclude=./gpu-results .) | (cd "$tmp" && tar xf -)
mkdir -p "$tmp/$(dirname "$BUILD")"
cp -a "$root/$BUILD" "$tmp/$BUILD"
mkdir -p "$tmp/$bindir" # (the binary may live inside the build folder, as make asan's)
cp -a "$root/$bindir/." "$tmp/$bindir/"

# build WHAT...: make in the copy with the given settings; output in $tmp/log
build() {
    (cd "$tmp" && $MAKE_CMD --no-print-directory BUILD="$BUILD" BIN="$BIN" "$@" all) >"$tmp/log" 2>&1
}

# no_lib NAME: nothing in the copy's bin folder needs a library named NAME*
no_lib() {
    for f in "$tmp/$BIN" "$tmp/$bindir"/*.so; do
        [ -f "$f" ] || continue
        if ldd "$f" 2>/dev/null | grep -q "$1"; then
            bad "$(basename "$f") still links $1"
        fi
    done
}

compiled() { grep -c '^  CC  \|^  NVCC' "$tmp/log"; }

if [ "$have_mpi" = 1 ]; then
    if ! build MPI=0; then
        cat "$tmp/log"
        bad "make MPI=0 failed"
    else
        [ -e "$tmp/$bindir/scaleplan-mpi.so" ] && bad "make MPI=0 kept $bindir/scaleplan-mpi.so"
        no_lib libmpi
        "$tmp/$BIN" --version | grep -q "no MPI" || bad "--version after MPI=0: $("$tmp/$BIN" --version)"
        grep -q 'CC      common/dist.c' "$tmp/log" || bad "MPI=0 did not recompile common/dist.c"
        grep -q 'CC      sim/' "$tmp/log" && bad "MPI=0 recompiled the simulator (sim/)"
        out=$(cd "$tmp" && OMPI_COMM_WORLD_SIZE=2 "$tmp/$BIN" train --model \
            tests/fixtures/configs/tiny-gpt.json --steps 1 --quiet 2>&1)
        case "$out" in
        *"built without MPI"*) ;;
        *) bad "a 2-rank launch after MPI=0 said: $out" ;;
        esac
        say "make MPI=0 after the build: $(compiled) file(s) recompiled, no MPI plug-in," \
            "ldd names no libmpi, a 2-rank launch stops with: $(echo "$out" | head -n 1)"
    fi
else
    say "MPI=0 check skipped: this build has no MPI"
fi

if [ "$have_cuda" = 1 ]; then
    if ! build CUDA=0; then
        cat "$tmp/log"
        bad "make CUDA=0 failed"
    else
        [ -e "$tmp/$bindir/scaleplan-cuda.so" ] && bad "make CUDA=0 kept $bindir/scaleplan-cuda.so"
        no_lib libcublasLt
        no_lib libnccl
        "$tmp/$BIN" --version | grep -q "no CUDA" || bad "--version after CUDA=0: $("$tmp/$BIN" --version)"
        grep -q 'CC      sim/' "$tmp/log" && bad "CUDA=0 recompiled the simulator (sim/)"
        say "make CUDA=0: $(compiled) file(s) recompiled, no CUDA plug-in"
    fi
else
    say "CUDA=0 check skipped: this build has no CUDA"
fi

# back to the settings of the real build
if ! build; then
    cat "$tmp/log"
    bad "make with the first settings again failed"
fi
[ "$have_mpi" = 1 ] && [ ! -e "$tmp/$bindir/scaleplan-mpi.so" ] && bad "the MPI plug-in did not come back"
[ "$have_cuda" = 1 ] && [ ! -e "$tmp/$bindir/scaleplan-cuda.so" ] && bad "the CUDA plug-in did not come back"
"$tmp/$BIN" --version | grep -qF "$features" || bad "--version is not the first build's again"
[ "$fail" = 0 ] && say "back to the first settings: $(compiled) file(s) recompiled; $features"

# plan VAR=VALUE: the compiles make would run (make -n); counts into n_cc, n_cu
# (make records the settings as it reads the Makefile, even with -n: put
# the recorded ones back after each look)
cp -a "$tmp/$BUILD/settings" "$tmp/settings.kept"
plan() {
    rm -rf "${tmp:?}/$BUILD/settings"
    cp -a "$tmp/settings.kept" "$tmp/$BUILD/settings"
    (cd "$tmp" && $MAKE_CMD -n --no-print-directory BUILD="$BUILD" BIN="$BIN" "$@" all) >"$tmp/make-n.out" 2>&1
    n_cc=$(grep -c -- ' -c [a-z_]*/[a-z_0-9]*\.c ' "$tmp/make-n.out")
    n_cu=$(grep -c -- ' -c [a-z_]*/[a-z_0-9]*\.cu ' "$tmp/make-n.out")
}
n_c_files=$(cd "$root" && ls common/*.c models/*.c topologies/*.c profile/*.c calibrate/*.c sim/*.c \
    run/*.c plan/*.c validate/*.c cluster/*.c inputs/*.c trainer/*.c reports/*.c commands/*.c \
    api/*.c cli/*.c | grep -vc dist_mpi.c)
n_cu_files=$(cd "$root" && ls calibrate/*.cu trainer/*.cu | wc -l)
plan OPT="-O1 -g -DSCALEPLAN_SETTINGS_PROBE" # (not any build's own OPT)
[ "$n_cc" -ge "$n_c_files" ] && [ "$n_cu" = 0 ] || bad "OPT change: make -n compiles $n_cc C and $n_cu .cu files (want all $n_c_files C, no .cu)"
say "OPT change: make would recompile $n_cc C files and $n_cu .cu files"
if [ "$have_cuda" = 1 ]; then
    plan GPU_ARCH="90"
    # C: only the few that print the build's features (build_config.h)
    n_sim=$(grep -c -- ' -c sim/' "$tmp/make-n.out")
    [ "$n_sim" = 0 ] && [ "$n_cc" -le 6 ] && [ "$n_cu" = "$n_cu_files" ] ||
        bad "GPU_ARCH change: make -n compiles $n_cc C and $n_cu .cu files (want all $n_cu_files .cu, at most the 6 C files that include build_config.h)"
    say "GPU_ARCH change: make would recompile $n_cu .cu files and $n_cc C files (those that print the features)"
fi
exit $fail
