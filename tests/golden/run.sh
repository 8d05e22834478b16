#!/bin/sh
# Compare scaleplan's outputs with the recorded golden outputs.
#   sh tests/golden/run.sh BIN            check (exit 1 on a difference)
#   sh tests/golden/run.sh BIN --update   rewrite the recorded outputs
# GOLDEN_WRAP (e.g. "valgrind --error-exitcode=1 ...") runs each command
# under that tool; anything it prints or a changed exit status is a diff.
set -u
bin=${1:?usage: run.sh BIN [--update]}
mode=${2:-check}
here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
# Timing figures differ run to run; everything else must not.
mask() {
    sed -E -e 's/"elapsed_s":[^,}]*/"elapsed_s":0/g' \
           -e 's/in [0-9.]+ s \([0-9.]+[kMG]? layouts\/s\)/in X s (X layouts\/s)/g' \
           -e 's/^elapsed_s,.*/elapsed_s,X/'
}
fail=0 n=0
while IFS='|' read -r name args; do
    case "$name" in ''|'#'*) continue ;; esac
    name=$(echo "$name" | tr -d ' ')
    n=$((n + 1))
    # shellcheck disable=SC2086
    (cd "$here/../.." && SCALEPLAN_PROGRESS=0 OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} \
        ${GOLDEN_WRAP:-} "$bin" $args 2>&1; echo "exit $?") \
        | mask > "$tmp/$name.out"
    if [ "$mode" = --update ]; then
        cp "$tmp/$name.out" "$out/$name.out"
    elif ! cmp -s "$tmp/$name.out" "$out/$name.out"; then
        echo "golden: $name differs:"
        diff "$out/$name.out" "$tmp/$name.out" | head -20
        fail=1
    fi
done < "$here/cases.txt"
if [ "$mode" = --update ]; then
    echo "golden: recorded $n outputs in tests/golden/out"
elif [ $fail = 0 ]; then
    echo "golden: $n outputs identical to the recorded ones"
fi
exit $fail
