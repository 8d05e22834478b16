#!/usr/bin/env python3
"""GPT-2 124M training throughput in PyTorch eager mode: the baseline the
CUDA trainer is compared with in tests/gpu/trainer.sh.

The model is the one scaleplan trains for `--model gpt2-124m`: 12 blocks,
768 wide, 12 heads, vocabulary 50257, 1024 positions, pre-LayerNorm, GELU
(tanh approximation), learned positions, biases, tied embeddings, no
dropout; initialisation normal(0, 0.02) with the residual projections
scaled by 1/sqrt(2 L). Training step: bf16 autocast forward (fp32 weights),
mean cross-entropy, backward, gradient clipping at 1.0, AdamW (lr 6e-4,
betas 0.9/0.95, eps 1e-8, weight decay 0.1 on matrices only; the fused
CUDA implementation when this PyTorch has it), on random tokens held on the
GPU (no data loading in the timed loop). No torch.compile.

--attn manual (default) materialises the causal attention scores and
softmax the way scaleplan's CUDA trainer does (q k^T, mask, softmax, @ v);
--attn sdpa uses F.scaled_dot_product_attention (flash / memory-efficient
kernels), a faster algorithm than the trainer implements.

Timing: --warmup steps untimed, then --steps steps between two
torch.cuda.synchronize() calls. Prints one JSON object on stdout.
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c, n_head, attn):
        super().__init__()
        self.n_head = n_head
        self.attn_impl = attn
        self.ln_1 = nn.LayerNorm(c, eps=1e-5)
        self.c_attn = nn.Linear(c, 3 * c)
        self.c_proj = nn.Linear(c, c)
        self.ln_2 = nn.LayerNorm(c, eps=1e-5)
        self.c_fc = nn.Linear(c, 4 * c)
        self.mlp_proj = nn.Linear(4 * c, c)

    def attention(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        hd = c // self.n_head
        q = q.view(b, t, self.n_head, hd).transpose(1, 2)
        k = k.view(b, t, self.n_head, hd).transpose(1, 2)
        v = v.view(b, t, self.n_head, hd).transpose(1, 2)
        if self.attn_impl == "sdpa":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return x


class GPT2(nn.Module):
    def __init__(self, vocab=50257, n_pos=1024, c=768, n_layer=12, n_head=12, attn="manual"):
        super().__init__()
        self.wte = nn.Embedding(vocab, c)
        self.wpe = nn.Embedding(n_pos, c)
        self.blocks = nn.ModuleList([Block(c, n_head, attn) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(c, eps=1e-5)
        self.lm_head = nn.Linear(c, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if name.endswith("c_proj.weight") or name.endswith("mlp_proj.weight"):
                    std = 0.02 / math.sqrt(2 * n_layer)
                nn.init.normal_(p, mean=0.0, std=std)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.view(-1))


def model_flops_per_token(n_params, n_layer, c, t, vocab):
    """Megatron convention (as scaleplan's models/flops.c): 72 s l h^2 (1 +
    s/(6h) + V/(12 h l)) per sequence / s, i.e. per token."""
    del n_params
    return 72 * n_layer * c * c * (1 + t / (6 * c) + vocab / (12 * c * n_layer))


def main():
    p = argparse.ArgumentParser(description="GPT-2 124M PyTorch eager training throughput")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--steps", type=int, default=25, help="timed steps")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    p.add_argument("--attn", choices=["manual", "sdpa"], default="manual")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--peak-tflops", type=float, default=0.0,
                   help="dense bf16 peak of the GPU, for the MFU figure (0 = not reported)")
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("pytorch_gpt2: no CUDA device visible to PyTorch", file=sys.stderr)
        return 1
    torch.manual_seed(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = False  # bf16 autocast does the GEMMs
    dev = torch.device("cuda")
    model = GPT2(attn=a.attn).to(dev)
    decay = [p_ for p_ in model.parameters() if p_.dim() >= 2]
    no_decay = [p_ for p_ in model.parameters() if p_.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    kw = dict(lr=6e-4, betas=(0.9, 0.95), eps=1e-8)
    fused = False
    try:
        opt = torch.optim.AdamW(groups, fused=True, **kw)
        fused = True
    except (TypeError, RuntimeError):
        opt = torch.optim.AdamW(groups, **kw)
    g = torch.Generator(device=dev)
    g.manual_seed(a.seed)
    x = torch.randint(0, 50257, (a.batch, a.seq), device=dev, generator=g)
    y = torch.randint(0, 50257, (a.batch, a.seq), device=dev, generator=g)
    losses = []

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    for _ in range(a.warmup):
        losses.append(step())
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        losses.append(step())
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    n_params = sum(p_.numel() for p_ in model.parameters())
    step_s = elapsed / a.steps
    tokens_per_s = a.batch * a.seq / step_s
    flops_tok = model_flops_per_token(n_params, 12, 768, a.seq, 50257)
    tflops = flops_tok * tokens_per_s / 1e12
    out = {
        "framework": "pytorch-eager",
        "attention": a.attn,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(),
        "fused_adamw": fused,
        "params": n_params,
        "batch": a.batch,
        "seq_len": a.seq,
        "warmup_steps": a.warmup,
        "timed_steps": a.steps,
        "step_time_s": step_s,
        "tokens_per_s": tokens_per_s,
        "model_tflops_per_gpu": tflops,
        "mfu": tflops / a.peak_tflops if a.peak_tflops > 0 else None,
        "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30,
        "losses": [float(l.detach()) for l in losses],
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
