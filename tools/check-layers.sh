#!/bin/sh
# The folders' include graph must stay the one-way DAG docs/ARCHITECTURE.md
# draws: each folder may include only the folders listed after it below.
# A back edge (say sim/ including calibrate/) fails with the file and line,
# and so does a private header (sim/costsInt.h) included outside its module.
#   sh tools/check-layers.sh [ROOT]   (default: this tree)
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
allowed() {
    case "$1" in
    common) echo "" ;;
    models) echo "common" ;;
    topologies) echo "common models" ;;
    profile) echo "common models topologies" ;;
    frameworks) echo "common models topologies profile" ;;
    calibrate) echo "common models topologies profile" ;;
    sim) echo "common models topologies profile frameworks" ;;
    run) echo "common models topologies profile frameworks sim" ;;
    plan) echo "common models topologies profile frameworks sim run" ;;
    validate) echo "common models topologies profile frameworks sim run plan" ;;
    cluster) echo "common models topologies profile frameworks sim run plan" ;;
    inputs) echo "common models topologies profile frameworks sim" ;;
    trainer) echo "common models topologies profile frameworks sim" ;;
    reports) echo "common models topologies profile frameworks sim run plan validate trainer" ;;
    commands) echo "common models topologies profile frameworks calibrate sim run plan validate cluster inputs trainer reports" ;;
    api) echo "common models topologies profile frameworks calibrate sim run plan validate cluster inputs trainer reports commands" ;;
    cli) echo "common reports" ;;
    *) echo "*" ;;
    esac
}
fail=0
for dir in common models topologies profile frameworks calibrate sim run plan validate cluster inputs trainer reports commands api cli; do
    [ -d "$dir" ] || continue
    ok=$(allowed "$dir")
    for f in $(find "$dir" -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' -o -name '*.inc'); do
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" |
        while IFS= read -r line; do
            target=$(echo "$line" | sed -E 's/.*include[[:space:]]*"([a-z_]+)\/.*/\1/')
            [ "$target" = "$dir" ] && continue
            case " $ok " in *" $target "*) continue ;; esac
            echo "check-layers: $f:${line%%:*}: $dir/ may not include $target/ (allowed: ${ok:-nothing})"
            echo x >> "${TMPDIR:-/tmp}/check-layers.$$"
        done
    done
done
# The front door: the command line reaches the rest only through the public
# header (include/scaleplan.h), not through a header of the tree's root.
for f in $(find cli -name '*.[ch]' 2>/dev/null); do
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^/"]*"' "$f" | grep -v '"scaleplan.h"' |
    while IFS= read -r line; do
        echo "check-layers: $f:${line%%:*}: cli/ includes only include/scaleplan.h, common/ and reports/"
        echo x >> "${TMPDIR:-/tmp}/check-layers.$$"
    done
done
# Private headers (SQLite's *Int.h): only the files of their module may
# include them. One "HEADER PATTERN" a line: who may include HEADER.
private_headers() {
    echo "sim/costsInt.h sim/cost*.c"
    echo "common/distInt.h common/dist*.c"
    echo "validate/publishedInt.h validate/published*.c"
    echo "models/hfconfigInt.h models/hfconfig*.c"
    echo "reports/reportInt.h reports/report*.c"
    echo "commands/argsInt.h commands/args*.c"
    echo "plan/planInt.h plan/plan*.c"
    echo "trainer/backend_cudaInt.cuh trainer/backend_cuda*.cu"
}
private_headers | while read -r header pattern; do
    for f in $(find common models topologies profile frameworks calibrate sim run plan validate \
                    cluster inputs trainer reports commands cli api include bench tests tools \
                    -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' -o -name '*.inc' 2>/dev/null); do
        # shellcheck disable=SC2254
        case "$f" in $pattern) continue ;; esac
        grep -n "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$header\"" "$f" |
        while IFS= read -r line; do
            echo "check-layers: $f:${line%%:*}: $header is private to $pattern"
            echo x >> "${TMPDIR:-/tmp}/check-layers.$$"
        done
    done
done
if [ -f "${TMPDIR:-/tmp}/check-layers.$$" ]; then
    rm -f "${TMPDIR:-/tmp}/check-layers.$$"
    exit 1
fi
echo "check-layers: the folder include graph is a one-way DAG, private headers stay private; cli/ goes through include/scaleplan.h"
