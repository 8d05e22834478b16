#!/usr/bin/env python3
"""How the power limit changes bf16 and fp8 GEMM rates: each precision run
cold (a short burst after the GPU idled) and hot (back to back for
--hot-s seconds), with the SM clock and board power read every 0.5 s.

Why: gemm_shapes.py timed 426 training shapes back to back, with the clock
held near 1,440 MHz by the 700 W limit (its sustain phase), and found fp8
1.82x bf16 where the peaks are 2x apart. Whether fp8 loses more clock than
bf16 under the limit, or is slower at any clock, decides how the simulator
prices fp8 in training, where GEMMs alternate with memory-bound kernels and
communication and the clock sits between the two states.

Usage: gemm_clock.py OUTDIR [--hot-s 15]
Writes OUTDIR/clock.csv (one row per precision, shape and state) and
OUTDIR/clock-smi.csv (the samples), and prints a table.
"""
import argparse
import csv
import os
import subprocess
import sys
import threading
import time

import torch

SHAPES = [  # m, n, k: Llama 3 70B/405B layer GEMMs at TP 8, 8,192 tokens, and a square
    (8192, 8192, 8192),
    (8192, 7168, 8192),    # 70B fc1 (gate+up) / TP8
    (8192, 8192, 3584),    # 70B fc2 / TP8
    (8192, 13312, 16384),  # 405B fc1 / TP8
    (8192, 16384, 6656),   # 405B fc2 / TP8
    (8192, 1280, 8192),    # 70B qkv / TP8 (narrow N)
    (8192, 8192, 1024),    # 70B proj / TP8 (short K)
]


class Sampler:
    """nvidia-smi every 0.5 s into rows tagged with the current label."""

    def __init__(self):
        self.rows = []
        self.label = "idle"
        self.stop = threading.Event()
        self.t0 = time.time()
        self.th = threading.Thread(target=self.loop)
        self.th.start()

    def loop(self):
        while not self.stop.is_set():
            try:
                q = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                                    "--format=csv,noheader,nounits"],
                                   capture_output=True, text=True, timeout=5).stdout.strip()
                mhz, watts, temp = [x.strip() for x in q.split(",")]
                self.rows.append((time.time() - self.t0, self.label, float(mhz), float(watts), temp))
            except Exception:
                pass
            self.stop.wait(0.5)

    def mean(self, label):
        v = [(r[2], r[3]) for r in self.rows if r[1] == label]
        if not v:
            return 0.0, 0.0
        return sum(x[0] for x in v) / len(v), sum(x[1] for x in v) / len(v)

    def close(self):
        self.stop.set()
        self.th.join()


def make_op(prec, m, n, k, dev):
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    c = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
    if prec == "bf16":
        return lambda: torch.matmul(a, b.t(), out=c)
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    one = torch.ones((), device=dev, dtype=torch.float32)
    fast = prec == "fp8-fast"
    return lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                    out_dtype=torch.bfloat16, use_fast_accum=fast)


def burst_ms(op, n):
    """Median ms of n calls, each timed with events."""
    t = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        op()
        e.record()
        e.synchronize()
        t.append(s.elapsed_time(e))
    t.sort()
    return t[len(t) // 2]


def hot_ms(op, seconds):
    """Mean ms per call over the last third of `seconds` of back-to-back calls."""
    t0 = time.time()
    samples = []
    while time.time() - t0 < seconds:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(20):
            op()
        e.record()
        e.synchronize()
        samples.append((time.time() - t0, s.elapsed_time(e) / 20))
    last = [ms for t, ms in samples if t > 2 * seconds / 3]
    return sum(last) / len(last)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--hot-s", type=float, default=15.0)
    ap.add_argument("--idle-s", type=float, default=3.0)
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    dev = torch.device("cuda")
    print("torch %s, %s" % (torch.__version__, torch.cuda.get_device_name(0)), flush=True)
    smp = Sampler()
    out = []
    for m, n, k in SHAPES:
        for prec in ("bf16", "fp8-split", "fp8-fast"):
            op = make_op(prec, m, n, k, dev)
            op()
            torch.cuda.synchronize()
            smp.label = "idle"
            time.sleep(args.idle_s)
            smp.label = "cold %s %dx%dx%d" % (prec, m, n, k)
            cold = burst_ms(op, 5)
            if (m, n, k) == SHAPES[0] or (m, n, k) == SHAPES[3]:
                smp.label = "hot %s %dx%dx%d" % (prec, m, n, k)
                hot = hot_ms(op, args.hot_s)
            else:
                hot = 0.0
            fl = 2.0 * m * n * k
            mhz, watts = smp.mean("hot %s %dx%dx%d" % (prec, m, n, k))
            row = (prec, m, n, k, cold, fl / (cold * 1e-3) / 1e12, hot,
                   fl / (hot * 1e-3) / 1e12 if hot else 0.0, mhz, watts)
            out.append(row)
            print("%-9s %5dx%5dx%5d cold %7.1f TFLOP/s  hot %7.1f TFLOP/s  (hot %4.0f MHz, %3.0f W)"
                  % (prec, m, n, k, row[5], row[7], mhz, watts), flush=True)
            del op
            torch.cuda.empty_cache()
    smp.close()
    with open(os.path.join(args.outdir, "clock.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["precision", "m", "n", "k", "cold_ms", "cold_tflops", "hot_ms", "hot_tflops",
                    "hot_sm_mhz", "hot_power_w"])
        for r in out:
            w.writerow([r[0], r[1], r[2], r[3], "%.5f" % r[4], "%.1f" % r[5], "%.5f" % r[6],
                        "%.1f" % r[7], "%.0f" % r[8], "%.0f" % r[9]])
    with open(os.path.join(args.outdir, "clock-smi.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "label", "sm_mhz", "power_w", "temp_c"])
        w.writerows(smp.rows)
    # fp8 over bf16, cold and hot, per shape
    by = {(r[0], r[1], r[2], r[3]): r for r in out}
    print("fp8 / bf16 rate:")
    for m, n, k in SHAPES:
        b = by[("bf16", m, n, k)]
        for p in ("fp8-split", "fp8-fast"):
            r = by[(p, m, n, k)]
            print("  %5dx%5dx%5d %-9s cold %.2f%s" % (m, n, k, p, r[5] / b[5],
                  ("  hot %.2f" % (r[7] / b[7])) if r[7] and b[7] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
