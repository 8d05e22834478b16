#!/bin/sh
# make check-mechanisms: every row of frameworks/options.def names the unit
# test that pins its mechanism. Run each test as it is (it must pass) and
# with SCALEPLAN_OPTION_OFF=KEY, which makes the preset reader load the
# row's off value (it must fail). A row whose test still passes with its
# option off is a mechanism no test would miss: the check fails.
#   sh tools/check-mechanisms.sh [RUNNER]   (default build/tests/run_tests)
set -u
cd "$(dirname "$0")/.." || exit 2
runner=${1:-build/tests/run_tests}
[ -x "$runner" ] || { echo "check-mechanisms: $runner is missing (make $runner)" >&2; exit 2; }
export SCALEPLAN_PROGRESS=0
: "${SCALEPLAN_BIN:=$PWD/bin/scaleplan}"
export SCALEPLAN_BIN
# key and test of each row: FW_OPTION("key", ..., "test") spans lines
rows=$(sed '/^\/\*/,/\*\//d' frameworks/options.def | tr '\n' ' ' | sed 's/FW_OPTION(/\n&/g' | grep '^FW_OPTION(' |
       sed -E 's/^FW_OPTION\("([a-z0-9_]+)".*"([A-Za-z0-9_]+)"\)[[:space:]]*$/\1 \2/')
bad=0 n=0
printf '%-30s %-36s %-6s %s\n' option test on off
for row in $(echo "$rows" | tr ' ' ':'); do
    key=${row%%:*} test=${row#*:}
    n=$((n + 1))
    if SCALEPLAN_TEST=$test "$runner" >/dev/null 2>&1; then on=pass; else on=FAIL; fi
    if SCALEPLAN_OPTION_OFF=$key SCALEPLAN_TEST=$test "$runner" >/dev/null 2>&1; then
        off=PASS
    else
        off=fails
    fi
    verdict=""
    [ "$on" = pass ] || verdict=" <- the test fails with the option on"
    [ "$off" = fails ] || verdict="$verdict <- the test misses the option switched off"
    [ -z "$verdict" ] || bad=$((bad + 1))
    printf '%-30s %-36s %-6s %s%s\n' "$key" "$test" "$on" "$off" "$verdict"
done
if [ "$bad" -ne 0 ]; then
    echo "check-mechanisms: $bad of $n option rows not pinned by their test"
    exit 1
fi
echo "check-mechanisms: all $n option rows pinned (each test fails with its option off)"
