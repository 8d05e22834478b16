#!/bin/sh
# Per-kernel GPU times of the CUDA trainer's step, measured with Nsight
# Compute, to set the simulator's cost of each operation against what the
# trainer really runs (not a check: it never fails on a number).
#
#   sh tests/gpu/kernel_times.sh OUT_DIR [train flags...]
#
# Default run: GPT-2 124M, bf16, micro-batch 8 x 1024, 2 steps (the
# trainer check's shape). ncu times every kernel of both steps one at a
# time (--clock-control none: the card's clocks as found); the second
# step's kernels are summed by name into OUT_DIR/kernel-times.txt, with
# the raw CSV beside it. Environment: SCALEPLAN_BIN (the binary), NCU (the
# ncu to use; default: on PATH or under /opt/nvidia/nsight-compute).
set -u
out=${1:?usage: kernel_times.sh OUT_DIR [train flags...]}
shift
cd "$(dirname "$0")/../.." || exit 1
BIN=${SCALEPLAN_BIN:-$PWD/bin/scaleplan}
NCU=${NCU:-$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -n 1)}
if [ -z "$NCU" ] || [ ! -x "$NCU" ]; then
    echo "kernel_times.sh: ncu (Nsight Compute) not found; set NCU" >&2
    exit 1
fi
flags=${*:---model gpt2-124m --micro-batch 8 --global-batch 8 --seq-len 1024}
mkdir -p "$out" || exit 1
echo "\$ $NCU --clock-control none --metrics gpu__time_duration.sum --csv --print-units base $BIN train $flags --device cuda --steps 2 --quiet" >"$out/kernel-times.txt"
# shellcheck disable=SC2086
"$NCU" --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
    "$BIN" train $flags --device cuda --steps 2 --quiet >"$out/kernel-times.csv" 2>"$out/kernel-times.err"
rc=$?
echo "ncu exit $rc" >>"$out/kernel-times.txt"
python3 - "$out/kernel-times.csv" >>"$out/kernel-times.txt" <<'EOF'
import csv, sys
from collections import defaultdict
rows = []
with open(sys.argv[1]) as f:
    lines = [l for l in f if l.startswith('"')]
for r in csv.DictReader(lines):
    if r.get("Metric Name") == "gpu__time_duration.sum":
        rows.append((int(r["ID"]), r["Kernel Name"], float(r["Metric Value"].replace(",", ""))))
rows.sort()
if not rows:
    print("no kernels timed")
    sys.exit(0)
# step 2: the launches after step 1's AdamW kernel up to and including
# step 2's (one AdamW launch a step over the flat parameter buffer)
ends = [i for i, (_, name, _) in enumerate(rows) if "adamw_kernel" in name]
half = rows[ends[0] + 1:ends[1] + 1] if len(ends) >= 2 else rows
by = defaultdict(lambda: [0, 0.0])
for _, name, ns in half:
    short = name.replace("void ", "", 1).split("(")[0][:90]
    by[short][0] += 1
    by[short][1] += ns
total = sum(v[1] for v in by.values())
print("%d kernels timed, %d in the step summed below; kernel time %.3f ms" % (len(rows), len(half), total / 1e6))
print("%10s %6s %6s  %s" % ("ms", "share", "count", "kernel"))
for name, (n, ns) in sorted(by.items(), key=lambda kv: -kv[1][1]):
    print("%10.3f %5.1f%% %6d  %s" % (ns / 1e6, 100 * ns / total, n, name))
EOF
tail -n 40 "$out/kernel-times.txt"
