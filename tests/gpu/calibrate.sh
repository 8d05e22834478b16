#!/bin/sh
# GPU check of `scaleplan calibrate` (run by tests/gpu/run.sh from make gpu-test).
#
#   1. `scaleplan calibrate --quick` on this machine: must succeed,
#      exercise GEMMs, memory kernels and NCCL (one rank per visible GPU; a
#      single GPU runs the one-rank code path), and write a profile that
#      `scaleplan sim --profile` accepts. These are the gates.
#   2. In the same run, PyTorch on the same GPU: the 8192^3 bf16 GEMM rate of
#      the sweep against torch.matmul's (same TN layout: a @ b.t()), and the
#      device-to-device copy bandwidth (bytes read + written) against a
#      torch copy_ of the same size.
#   3. The simulator with the measured profile against the default profile
#      on the validation rows of this GPU (tests/fixtures/validation/
#      throughput.csv, scaleplan validate --published). (The profile keeps the default's
#      training-level sustained factor, calibrate.h; a refit at factor 1,
#      the measured burst rates as they are, is reported alongside.)
#   Gates set from the first measured run (H200, 2026-11-27,
#   docs/gpu-runs/): --quick under 2 minutes (took 11 s); the GEMM rate at
#   least 95% of torch.matmul's (measured 1.14x) and the copy bandwidth
#   within 5% of torch's (-0.1%). Recorded, not a gate: a GEMM rate more
#   than 5% above PyTorch's, and part 3, the measured profile against the
#   default (the first run: 11.75% against 4.54% median |error| on the H200
#   rows), which gates only with GPU_TEST_GATE_PERF=1.
#
# Results go to $GPU_TEST_OUT: the profile, its raw measurements, --show
# output and calibrate-summary.txt with every number compared. Commit the
# profile as profile/catalog/measured/<gpu>.json (not profile/catalog/
# itself, whose files are the embedded defaults) with the command line from
# the summary.
set -eu
: "${SCALEPLAN_BIN:?run through tests/gpu/run.sh (make gpu-test)}"
: "${GPU_TEST_DIR:=$(mktemp -d)}"
: "${GPU_TEST_OUT:=$PWD/gpu-results}"
mkdir -p "$GPU_TEST_OUT"
W=$GPU_TEST_DIR
SUM=$GPU_TEST_OUT/calibrate-summary.txt
fail=0
say() { echo "$*" | tee -a "$SUM"; }
# a speed or accuracy target missed: a failure only with GPU_TEST_GATE_PERF=1
perf_miss() {
    if [ "${GPU_TEST_GATE_PERF:-0}" = 1 ]; then
        say "FAIL: $*"
        fail=1
    else
        say "REPORT (not a gate until set from measurements): $*"
    fi
}
: >"$SUM"

command -v python3 >/dev/null 2>&1 || { echo "calibrate.sh: python3 not found" >&2; exit 1; }

# ---------------------------------------------------------------- 1. --quick
say "== scaleplan calibrate --quick ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader \
    | tee -a "$SUM" || true
t0=$(date +%s)
if ! "$SCALEPLAN_BIN" calibrate --quick --out "$W/profile.json" --json >"$W/quick.json" 2>"$W/quick.err"; then
    cat "$W/quick.err" >&2
    echo "calibrate.sh: scaleplan calibrate --quick failed" >&2
    exit 1
fi
t1=$(date +%s)
quick_s=$((t1 - t0))
say "quick calibration took ${quick_s} s (target 120 s)"
[ "$quick_s" -lt 120 ] || { say "FAIL: --quick took ${quick_s} s (limit 120 s)"; fail=1; }
M=$W/profile.json.measurements.json
GPU=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['gpu'])" "$W/profile.json")
"$SCALEPLAN_BIN" calibrate --show "$W/profile.json" >"$W/show.txt"
cp "$W/profile.json" "$GPU_TEST_OUT/calibrate-$GPU-quick.json"
cp "$M" "$GPU_TEST_OUT/calibrate-$GPU-quick.measurements.json"
cp "$W/show.txt" "$GPU_TEST_OUT/calibrate-$GPU-quick.show.txt"
say "profile of $GPU: $GPU_TEST_OUT/calibrate-$GPU-quick.json"
say "made by: scaleplan calibrate --quick --out profile/catalog/measured/$GPU.json"
sed -n '1,/^$/p' "$W/show.txt" | tee -a "$SUM"
grep -E '^  [a-z_0-9/@]+ +[0-9]+ +-?[0-9.]+ ' "$W/show.txt" | tee -a "$SUM" || true # the fits

# every part measured; NCCL on all visible GPUs (one rank: the code path only)
python3 - "$M" <<'EOF' | tee -a "$SUM"
import json, sys
m = json.load(open(sys.argv[1]))
ops = sorted({(c["op"], c["n_ranks"], c["algo"]) for c in m["collectives"]})
print("measured: %d GEMMs, %d memory-kernel runs, launch %.2f us, sustained %.0f of %.0f TFLOP/s, "
      "%d collective series %s" % (len(m["gemm"]), len(m["memory"]), m["launch"]["back_to_back_us"],
      m.get("gemm_sustained", {}).get("sustained_tflops", 0),
      m.get("gemm_sustained", {}).get("burst_tflops", 0), len(m["collectives"]), ops))
assert m["gemm"] and m["memory"] and m["collectives"], "a part of the calibration is missing"
EOF

"$SCALEPLAN_BIN" sim --model llama3-8b --gpu "$GPU" --gpus 8 --tp 2 --distributed-optimizer --profile "$W/profile.json" --json \
    >"$W/sim.json" || { say "FAIL: sim --profile rejected the measured profile"; fail=1; }

# ---------------------------------------------------------------- 2. vs PyTorch
torch_ok=1
python3 - "$M" >"$W/torch.txt" 2>"$W/torch.err" <<'EOF' || torch_ok=0
import json, sys
import torch
m = json.load(open(sys.argv[1]))
ours = [g for g in m["gemm"] if g["dtype"] == "bf16" and g["m"] == g["n"] == g["k"] == 8192]
copy = [x for x in m["memory"] if x["kernel"] == "copy"]
big = max(copy, key=lambda x: x["bytes"])
ours_copy = big["bytes"] / (big["time_us"] * 1e-6) / 1e9
size = int(big["bytes"] // 2)           # bytes of the buffer copied
dev = torch.device("cuda:0")

def timed(fn, inner, reps=9):
    for _ in range(inner):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(inner):
            fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / inner)
    return sorted(out)[len(out) // 2]  # median, ms

a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
c = torch.empty(8192, 8192, device=dev, dtype=torch.bfloat16)
# the faster of writing into c and allocating the result (the first run,
# 2026-11-27, saw 686 TFLOP/s with out= where KINDS.md records 788 without)
ms = min(timed(lambda: torch.matmul(a, b.t(), out=c), 20), timed(lambda: torch.matmul(a, b.t()), 20))
torch_gemm = 2 * 8192 ** 3 / (ms * 1e-3) / 1e12
# fp8 (e4m3, bf16 out) through torch._scaled_mm with and without fast
# accumulation: Transformer Engine runs its forward GEMMs with it and the
# gradient GEMMs without (split accumulator; transformer_engine/pytorch/
# module/base.py _2X_ACC_FPROP = False, _2X_ACC_DGRAD = _2X_ACC_WGRAD =
# True), and calibrate measures without: the first run saw its fp8 rate at
# 0.69 of the default profile's on training shapes (bf16: 0.95); recorded
# to tell how far the two accumulation modes are apart
fp8 = {}
try:
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.to(torch.float8_e4m3fn)
    one = torch.ones((), device=dev, dtype=torch.float32)
    for fast in (False, True):
        ms8 = timed(lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                            out_dtype=torch.bfloat16, use_fast_accum=fast), 20)
        fp8[fast] = 2 * 8192 ** 3 / (ms8 * 1e-3) / 1e12
except Exception as e:  # an API change must not stop the other comparisons
    print("fp8 not measured: %s" % str(e).splitlines()[0])
ours8 = [g for g in m["gemm"] if g["dtype"] == "fp8" and g["m"] == g["n"] == g["k"] == 8192]
x = torch.empty(size, device=dev, dtype=torch.uint8).random_()
y = torch.empty_like(x)
ms = timed(lambda: y.copy_(x), 20)
torch_copy = 2 * size / (ms * 1e-3) / 1e9
print("torch %s, %s" % (torch.__version__, torch.cuda.get_device_name(0)))
print("gemm8192 %.1f %.1f" % (ours[0]["tflops"] if ours else 0, torch_gemm))
if fp8:
    print("fp8 8192^3 TFLOP/s: scaleplan calibrate %.1f; torch._scaled_mm split accumulator %.1f, "
          "fast accumulation %.1f" % (ours8[0]["tflops"] if ours8 else 0, fp8[False], fp8[True]))
print("copy %d %.1f %.1f" % (size, ours_copy, torch_copy))
EOF
if [ "$torch_ok" = 1 ]; then
cat "$W/torch.txt" | tee -a "$SUM"
check() { # name ours theirs: prints low, ok or high (more than 5% under, within, over)
    python3 - "$@" <<'EOF'
import sys
name, ours, theirs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
rel = ours / theirs - 1 if theirs > 0 else float("inf")
verdict = "low" if rel < -0.05 else "high" if rel > 0.05 else "ok"
print("%s: scaleplan %.1f vs PyTorch %.1f (%+.1f%%, target 5%%): %s"
      % (name, ours, theirs, 100 * rel, verdict))
EOF
}
set -- $(grep '^gemm8192' "$W/torch.txt")
line=$(check "8192^3 bf16 GEMM TFLOP/s" "$2" "$3")
say "$line"
case "$line" in
*": low") say "FAIL: 8192^3 bf16 GEMM rate more than 5% under torch.matmul's"; fail=1 ;;
*": high") say "REPORT: 8192^3 bf16 GEMM rate more than 5% above torch.matmul's (not a gate)" ;;
esac
set -- $(grep '^copy' "$W/torch.txt")
line=$(check "device copy of $2 B, GB/s (read + write)" "$3" "$4")
say "$line"
case "$line" in *": ok") ;; *) say "FAIL: copy bandwidth more than 5% from torch's"; fail=1 ;; esac
else
    say "PyTorch comparison did not run: $(tail -n 2 "$W/torch.err" | tr '\n' ' ')"
    cp "$W/torch.err" "$GPU_TEST_OUT/calibrate-torch.err" 2>/dev/null || true
    perf_miss "no PyTorch rates to compare with"
fi

# ---------------------------------------------------------------- 3. validation rows
"$SCALEPLAN_BIN" calibrate --fit "$M" --sustained-factor 1 --out "$W/profile-burst.json" >/dev/null
median_err() { # profile (or "") -> median |error| % of this GPU's published rows, or "none"
    if [ -n "$1" ]; then set -- --profile "$1"; fi
    "$SCALEPLAN_BIN" validate --published tests/fixtures/validation/throughput.csv "$@" --json \
        2>/dev/null | python3 -c '
import json, sys
gpu = sys.argv[1]
try:
    rows = json.load(sys.stdin)["rows"]
except Exception:
    rows = []
errs = sorted(abs(r["error"]) * 100 for r in rows if r["gpu"] == gpu and not r["skipped"])
print("%.2f" % errs[(len(errs) - 1) // 2] if errs else "none")' "$GPU"
}
if [ -f tests/fixtures/validation/throughput.csv ]; then
    d=$(median_err "")
    mb=$(median_err "$W/profile.json")
    m1=$(median_err "$W/profile-burst.json")
    say "validation rows of $GPU (median |error|): default profile $d%, measured $mb%," \
        "measured at sustained factor 1 $m1% (for information)"
    if [ "$d" != none ] && [ "$mb" != none ]; then
        python3 -c "import sys; sys.exit(0 if float('$mb') <= float('$d') + 0.05 else 1)" ||
            perf_miss "the measured profile predicts the $GPU rows worse than the default"
    else
        say "no validation rows for $GPU: comparison skipped"
    fi
else
    say "tests/fixtures/validation/throughput.csv not here: validation comparison skipped"
fi

[ "$fail" -eq 0 ] && say "calibrate.sh: all checks passed" || say "calibrate.sh: FAILED"
exit "$fail"
