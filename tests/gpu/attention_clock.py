#!/usr/bin/env python3
"""Whether the power limit slows fused attention as it slows GEMMs: causal
attention forward and backward (PyTorch's flash backend, FlashAttention-2,
and cuDNN) timed cold (a short burst after the GPU idled), hot on its own
(back to back for --hot-s seconds) and hot right after --hot-s seconds of
bf16 GEMMs (as in training, where attention follows the linear layers),
with the SM clock and board power sampled every 0.5 s (gemm_clock.py's
sampler). Also the ring-attention block shapes a context-parallel step runs:
one causal block of s/CP queries and keys and non-causal half blocks.

Why: the simulator multiplies GEMM and attention rates by one sustained
factor per GPU. On an H200 (docs/gpu-runs/2026-11-27-h200-2) GEMMs ran hot
at 0.85 of their cold rate while attention measured within a few percent of
its benchmark figures; if attention keeps its clock under the limit, the
factor belongs to the GEMMs alone, which moves every long-sequence
prediction (torchtitan's 32K-256K runs, NeMo's long-context series).

Usage: attention_clock.py OUTDIR [--hot-s 15] [--idle-s 3]
Writes OUTDIR/attention-clock.csv (backend, shape, pass, state, ms, TFLOP/s,
mean SM MHz and W of the state) and OUTDIR/attention-clock-smi.csv, and
prints a table with the hot/cold ratio of each.
"""
import argparse
import csv
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_clock import Sampler, burst_ms, hot_ms, make_op  # noqa: E402

HEADS, HEAD_DIM = 8, 128
# (label, queries, keys, causal): whole sequences, and a CP-8 ring step of a
# 262,144-token sequence (32,768 tokens a rank: the local causal block and
# the two non-causal half blocks the load-balanced ring runs)
SHAPES = [
    ("seq 8192", 8192, 8192, True),
    ("seq 32768", 32768, 32768, True),
    ("cp8 local causal", 32768, 32768, True),
    ("cp8 half keys", 32768, 16384, False),
    ("cp8 half queries", 16384, 32768, False),
]
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def attention_ops(backend, q_len, k_len, causal, dev):
    """Forward and forward+backward closures and their FLOPs (the causal
    half counted; the backward 2.5 forwards)."""
    q = torch.randn(1, HEADS, q_len, HEAD_DIM, device=dev, dtype=torch.bfloat16,
                    requires_grad=True)
    k = torch.randn(1, HEADS, k_len, HEAD_DIM, device=dev, dtype=torch.bfloat16,
                    requires_grad=True)
    v = torch.randn_like(k, requires_grad=True)
    g = torch.randn(1, HEADS, q_len, HEAD_DIM, device=dev, dtype=torch.bfloat16)

    def fwd():
        with sdpa_kernel(backend), torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def fwd_bwd():
        with sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o.backward(g)

    flops = 4.0 * q_len * k_len * HEADS * HEAD_DIM * (0.5 if causal else 1.0)
    return fwd, fwd_bwd, flops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--hot-s", type=float, default=15.0)
    ap.add_argument("--idle-s", type=float, default=3.0)
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    dev = torch.device("cuda")
    print("torch %s, %s" % (torch.__version__, torch.cuda.get_device_name(0)), flush=True)
    heat = make_op("bf16", 8192, 8192, 8192, dev)  # the GEMM load before "after-gemm"
    smp = Sampler()
    out = []
    for bname, backend in BACKENDS:
        for label, q_len, k_len, causal in SHAPES:
            try:
                fwd, fwd_bwd, flops = attention_ops(backend, q_len, k_len, causal, dev)
                fwd_bwd()
                torch.cuda.synchronize()
            except RuntimeError as e:  # a backend that does not take the shape
                print("%-5s %-17s skipped: %s" % (bname, label, str(e).splitlines()[0]),
                      flush=True)
                continue
            for pname, op, fl in (("fwd", fwd, flops), ("fwd+bwd", fwd_bwd, 3.5 * flops)):
                tag = "%s %s %s" % (bname, label, pname)
                smp.label = "idle"
                time.sleep(args.idle_s)
                smp.label = "cold " + tag
                cold = burst_ms(op, 5)
                smp.label = "hot " + tag
                hot = hot_ms(op, args.hot_s)
                smp.label = "gemm before " + tag
                hot_ms(heat, args.hot_s)
                smp.label = "after-gemm " + tag
                after = burst_ms(op, 5)
                for state, ms in (("cold", cold), ("hot", hot), ("after-gemm", after)):
                    mhz, watts = smp.mean("%s %s" % (state, tag))
                    out.append((bname, label, q_len, k_len, causal, pname, state, ms,
                                fl / (ms * 1e-3) / 1e12, mhz, watts))
                print("%-5s %-17s %-7s cold %6.1f  hot %6.1f (%.2f)  after GEMMs %6.1f (%.2f) "
                      "TFLOP/s" % (bname, label, pname, out[-3][8], out[-2][8],
                                   out[-2][8] / out[-3][8], out[-1][8], out[-1][8] / out[-3][8]),
                      flush=True)
            del fwd, fwd_bwd
            torch.cuda.empty_cache()
    smp.close()
    with open(os.path.join(args.outdir, "attention-clock.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["backend", "shape", "queries", "keys", "causal", "pass", "state", "ms",
                    "tflops", "sm_mhz", "power_w"])
        for r in out:
            w.writerow([r[0], r[1], r[2], r[3], int(r[4]), r[5], r[6], "%.4f" % r[7],
                        "%.1f" % r[8], "%.0f" % r[9], "%.0f" % r[10]])
    with open(os.path.join(args.outdir, "attention-clock-smi.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "label", "sm_mhz", "power_w", "temp_c"])
        w.writerows(smp.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
