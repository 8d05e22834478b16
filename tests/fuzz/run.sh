#!/bin/sh
# Run one fuzz target: sh tests/fuzz/run.sh NAME SECONDS [SEED_FILE...]
#
# The corpus lives in build-fuzz/corpus/NAME (it keeps what earlier runs
# found) and starts from the seed files. libFuzzer stops at the first crash,
# sanitizer report, leak (LeakSanitizer), timeout (FUZZ_TIMEOUT seconds for
# one input) or input over FUZZ_RSS_MB of memory, saves the input under
# build-fuzz/artifacts/ and exits non-zero; this script then prints the end
# of its log and exits 1. Otherwise one line: executions, seconds, corpus.
set -u
name=${1:?usage: run.sh NAME SECONDS [SEED...]}
secs=${2:?usage: run.sh NAME SECONDS [SEED...]}
shift 2
root=build-fuzz
bin=$root/fuzz/$name
[ -x "$bin" ] || { echo "fuzz: $bin not built (make fuzz)" >&2; exit 1; }
corpus=$root/corpus/$name
mkdir -p "$corpus" "$root/artifacts" "$root/logs"
for f in "$@"; do
    [ -f "$f" ] && cp "$f" "$corpus/seed-$(echo "$f" | tr '/' '_')"
done
log=$root/logs/$name.log
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$bin" -max_total_time="$secs" -max_len="${FUZZ_MAX_LEN:-16384}" -timeout="${FUZZ_TIMEOUT:-20}" \
    -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -artifact_prefix="$root/artifacts/$name-" \
    -print_final_stats=1 ${FUZZ_ARGS:-} "$corpus" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
size=$(ls "$corpus" | wc -l)
if [ $rc -ne 0 ]; then
    echo "fuzz: $name FAILED (exit $rc) after ${runs:-?} executions; log $log:" >&2
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written|timeout|leak' "$log" | head -20 >&2
    exit 1
fi
echo "fuzz: $name: ${runs:-?} executions in ${secs} s, 0 crashes, 0 leaks, 0 timeouts (corpus $size inputs)"
