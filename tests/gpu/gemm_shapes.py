#!/usr/bin/env python3
"""Time the GEMMs of transformer training layers on one GPU, by shape and
precision, and the matrix rate a GPU sustains under minutes of load.

Why: the simulator prices each GEMM from a small model (peak x best
efficiency x wave quantization x a K-dependent main-loop factor x a
sustained factor), whose tile, wave penalty and k_half are assumed or
fitted on published runs. This measures the same GEMMs the simulator
prices for dense decoder layers (Llama 3 8B/70B/405B dimensions, tensor
parallel 1-8, 4,096-16,384 tokens per micro-batch; forward, input
gradient and weight gradient, plus the output head), in

  bf16        torch.matmul
  fp8-split   torch._scaled_mm, e4m3 per-tensor scales, split accumulator
              (Transformer Engine's choice for the gradient GEMMs)
  fp8-fast    the same with fast accumulation (Transformer Engine's
              choice for the forward GEMMs; transformer_engine/pytorch/
              module/base.py _2X_ACC_FPROP = False)
  fp8-row     per-row / per-column scales (torchao float8 rowwise, the
              recipe torchtitan's "rowwise" float8 runs)

and, separately, a 8192^3 bf16 GEMM run back to back for --sustain-s
seconds with the SM clock and power read every second, to measure how far
the clock falls under the power limit (the sustained factor the profiles
otherwise fit); and causal flash attention through PyTorch's flash and
cuDNN backends at 2K-64K keys (backward counted as 2.5 forwards).

Usage: gemm_shapes.py OUTDIR [--sustain-s 45] [--reps 20] [--models llama,mpt]
Writes OUTDIR/gemm-shapes.csv, attention.csv, sustain.csv, sustain-smi.csv and prints a summary.
"""
import argparse
import csv
import os
import subprocess
import sys
import threading
import time

import torch

# name: hidden, ffn, heads, kv heads, head dim, vocab, gated MLP
LLAMA = {  # Llama 3 configs (SwiGLU)
    "llama3-8b": (4096, 14336, 32, 8, 128, 128256, True),
    "llama3-70b": (8192, 28672, 64, 8, 128, 128256, True),
    "llama3-405b": (16384, 53248, 128, 8, 128, 128256, True),
}
MPT = {  # llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml (GELU, ffn 4h): the narrow
    # models whose GEMMs have K of 768-2560, where the model's k_half matters most
    "mpt-125m": (768, 3072, 12, 12, 64, 50368, False),
    "mpt-760m": (1536, 6144, 12, 12, 128, 50368, False),
    "mpt-1b": (2048, 8192, 16, 16, 128, 50368, False),
    "mpt-3b": (2560, 10240, 20, 20, 128, 50368, False),
}
SETS = {"llama": (LLAMA, (1, 2, 4, 8), (4096, 8192, 16384)),
        "mpt": (MPT, (1,), (8192, 24576, 65536))}


def layer_gemms(h, ffn, heads, kv, hd, vocab, gated, tp, tokens):
    """(name, m, n, k) of one layer's forward GEMMs under tensor parallel tp,
    and their input- and weight-gradient products; the head once."""
    fwd = [
        ("qkv", tokens, (heads + 2 * kv) * hd // tp, h),
        ("proj", tokens, h, heads * hd // tp),
        ("fc1", tokens, (2 if gated else 1) * ffn // tp, h),  # SwiGLU: gate and up in one
        ("fc2", tokens, h, ffn // tp),
        ("head", tokens, vocab // tp, h),
    ]
    out = []
    for name, m, n, k in fwd:
        out.append((name + ".fprop", m, n, k))
        out.append((name + ".dgrad", m, k, n))
        out.append((name + ".wgrad", n, k, m))
    return out


def timed_ms(fn, reps):
    """Median ms of fn over repetitions: reps at most, fewer (not under 5)
    where one call is long, so that each shape and mode costs about 0.1 s."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    times = []
    n = reps
    i = 0
    while i < n:
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
        if i == 0:
            n = max(5, min(reps, int(100.0 / max(times[0], 1e-3))))
        i += 1
    times.sort()
    return times[len(times) // 2]


def measure_shape(m, n, k, reps, dev):
    """ms per mode for C[m,n] = A[m,k] B[n,k]^T; None where a mode fails."""
    res = {}
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    c = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
    res["bf16"] = timed_ms(lambda: torch.matmul(a, b.t(), out=c), reps)
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.to(torch.float8_e4m3fn)
    del a, b
    one = torch.ones((), device=dev, dtype=torch.float32)
    for mode, fast in (("fp8-split", False), ("fp8-fast", True)):
        try:
            res[mode] = timed_ms(lambda: torch._scaled_mm(
                a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                use_fast_accum=fast), reps)
        except Exception as e:  # an API difference must not stop the rest
            res[mode] = None
            res.setdefault("errors", []).append("%s: %s" % (mode, str(e).splitlines()[0][:120]))
    try:
        sa = torch.ones(m, 1, device=dev, dtype=torch.float32)
        sb = torch.ones(1, n, device=dev, dtype=torch.float32)
        res["fp8-row"] = timed_ms(lambda: torch._scaled_mm(
            a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
            use_fast_accum=True), reps)
    except Exception as e:
        res["fp8-row"] = None
        res.setdefault("errors", []).append("fp8-row: %s" % str(e).splitlines()[0][:120])
    del a8, b8, c
    return res


def attention(outdir, reps, dev):
    """Causal attention forward and backward through PyTorch's flash and
    cuDNN backends (head dim 128, 8 heads of one tensor-parallel rank, one
    sequence): TFLOP/s at 2,048-65,536 keys, counting the causal half."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    path = os.path.join(outdir, "attention.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["backend", "seq", "heads", "head_dim", "fwd_ms", "bwd_ms", "fwd_tflops", "bwd_tflops"])
        for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            for seq in (2048, 4096, 8192, 16384, 32768, 65536):
                heads, hd = 8, 128
                try:
                    q, k, v = (torch.randn(1, heads, seq, hd, device=dev, dtype=torch.bfloat16,
                                           requires_grad=True) for _ in range(3))
                    with sdpa_kernel([be]):
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                        g = torch.randn_like(o)
                        fwd = timed_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), reps)
                        both = timed_ms(lambda: torch.autograd.grad(
                            F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v), g), reps)
                    fl = 4.0 * seq * seq * hd * heads / 2  # QK^T and PV, causal half
                    bwd = both - fwd
                    w.writerow([name, seq, heads, hd, "%.4f" % fwd, "%.4f" % bwd,
                                "%.1f" % (fl / (fwd * 1e-3) / 1e12), "%.1f" % (2.5 * fl / (bwd * 1e-3) / 1e12)])
                    print("  attention %-5s seq %6d: fwd %.1f, bwd %.1f TFLOP/s" % (
                        name, seq, fl / (fwd * 1e-3) / 1e12, 2.5 * fl / (bwd * 1e-3) / 1e12), flush=True)
                    del q, k, v, o, g
                except Exception as e:
                    print("  attention %s seq %d not measured: %s" % (name, seq, str(e).splitlines()[0][:120]))


def smi_sampler(path, stop):
    """Every second: SM clock (MHz), power (W), temperature, while stop is clear."""
    with open(path, "w") as f:
        f.write("t_s,sm_mhz,power_w,temp_c\n")
        t0 = time.time()
        while not stop.is_set():
            try:
                q = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                                    "--format=csv,noheader,nounits"],
                                   capture_output=True, text=True, timeout=5).stdout.strip()
                f.write("%.1f,%s\n" % (time.time() - t0, q.replace(" ", "")))
                f.flush()
            except Exception:
                pass
            stop.wait(1.0)


def sustain(outdir, seconds, dev):
    """bf16 8192^3 GEMMs back to back: TFLOP/s per second of load."""
    n = 8192
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    c = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
    flops = 2.0 * n ** 3
    stop = threading.Event()
    th = threading.Thread(target=smi_sampler, args=(os.path.join(outdir, "sustain-smi.csv"), stop))
    th.start()
    rows = []
    t0 = time.time()
    while time.time() - t0 < seconds:
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(50):
            torch.matmul(a, b.t(), out=c)
        e.record()
        e.synchronize()
        ms = s.elapsed_time(e)
        rows.append((time.time() - t0, 50 * flops / (ms * 1e-3) / 1e12))
    stop.set()
    th.join()
    with open(os.path.join(outdir, "sustain.csv"), "w") as f:
        f.write("t_s,tflops\n")
        for t, r in rows:
            f.write("%.2f,%.1f\n" % (t, r))
    first = [r for t, r in rows if t < 2.0]
    last = [r for t, r in rows if t > seconds - 10]
    return (sum(first) / len(first) if first else 0, sum(last) / len(last) if last else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--sustain-s", type=float, default=45.0)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--models", default="llama",
                    help="comma-separated shape sets: llama (Llama 3 8B/70B/405B, TP 1-8, 4K-16K "
                         "tokens; the default), mpt (MPT 125M-3B, TP 1, 8K-64K tokens)")
    args = ap.parse_args()
    wanted = [x for x in args.models.split(",") if x]
    for x in wanted:
        if x not in SETS:
            sys.exit("gemm_shapes.py: --models: unknown set '%s' (use %s)" % (x, ", ".join(SETS)))
    os.makedirs(args.outdir, exist_ok=True)
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    print("torch %s, %s, %d SMs" % (torch.__version__, torch.cuda.get_device_name(0),
                                     torch.cuda.get_device_properties(0).multi_processor_count),
          flush=True)
    shapes = {}
    for set_name in wanted:
        models, tps, token_counts = SETS[set_name]
        for model, dims in models.items():
            for tp in tps:
                for tokens in token_counts:
                    for name, m, n, k in layer_gemms(*dims, tp, tokens):
                        shapes.setdefault((m, n, k), "%s tp%d t%d %s" % (model, tp, tokens, name))
    t0 = time.time()
    path = os.path.join(args.outdir, "gemm-shapes.csv")
    errors = set()
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["m", "n", "k", "first_use", "bf16_ms", "fp8_split_ms", "fp8_fast_ms", "fp8_row_ms"])
        for i, ((m, n, k), use) in enumerate(sorted(shapes.items())):
            r = measure_shape(m, n, k, args.reps, dev)
            errors.update(r.get("errors", []))
            fmt = lambda v: "" if v is None else "%.5f" % v
            w.writerow([m, n, k, use, fmt(r["bf16"]), fmt(r.get("fp8-split")),
                        fmt(r.get("fp8-fast")), fmt(r.get("fp8-row"))])
            if i % 50 == 0:
                print("  %d of %d shapes, %.0f s" % (i, len(shapes), time.time() - t0), flush=True)
                f.flush()
    for e in sorted(errors):
        print("not measured: " + e)
    print("%d shapes in %.0f s -> %s" % (len(shapes), time.time() - t0, path), flush=True)
    attention(args.outdir, args.reps, dev)
    first, last = sustain(args.outdir, args.sustain_s, dev)
    print("sustained bf16 8192^3: first 2 s %.1f TFLOP/s, last 10 s %.1f TFLOP/s (%.3f of the first)"
          % (first, last, last / first if first else 0))
    # summary: median rate per mode over all shapes, TFLOP/s
    rates = {mo: [] for mo in ("bf16_ms", "fp8_split_ms", "fp8_fast_ms", "fp8_row_ms")}
    with open(path) as f:
        for row in csv.DictReader(f):
            fl = 2.0 * int(row["m"]) * int(row["n"]) * int(row["k"])
            for mo in rates:
                if row[mo]:
                    rates[mo].append(fl / (float(row[mo]) * 1e-3) / 1e12)
    for mo, v in rates.items():
        v.sort()
        if v:
            print("%-13s median %.0f TFLOP/s over %d shapes (p10 %.0f, p90 %.0f)"
                  % (mo, v[len(v) // 2], len(v), v[len(v) // 10], v[9 * len(v) // 10]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
