#!/bin/sh
# The folders' include graph must stay the one-way DAG docs/ARCHITECTURE.md
# draws: each folder may include only the folders listed after it below.
# A back edge (say sim/ including calibrate/) fails with the file and line.
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
    cluster) echo "common models topologies profile frameworks sim" ;;
    inputs) echo "common models topologies profile frameworks sim" ;;
    trainer) echo "common models topologies profile frameworks sim" ;;
    reports) echo "common models topologies profile frameworks sim trainer" ;;
    cli) echo "common models topologies profile frameworks calibrate sim cluster inputs trainer reports" ;;
    api) echo "common models topologies profile frameworks calibrate sim cluster inputs trainer reports cli" ;;
    *) echo "*" ;;
    esac
}
fail=0
for dir in common models topologies profile frameworks calibrate sim cluster inputs trainer reports cli api; do
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
if [ -f "${TMPDIR:-/tmp}/check-layers.$$" ]; then
    rm -f "${TMPDIR:-/tmp}/check-layers.$$"
    exit 1
fi
echo "check-layers: the folder include graph is a one-way DAG"
