#!/usr/bin/env python3
"""Compare two gradient dumps of `scaleplan train --dump-grads FILE`.

Each file is the flat gradient buffer of rank 0 after step 1's backward:
raw little-endian float32, n_params values in gpt.h's layout. The error is
the relative L2 norm ||test - ref|| / ||ref|| over the whole buffer; the
script also names the worst elements so a layout or indexing bug shows up
as a place, not just a number.

When REF.bin.tensors exists (train --dump-grads writes it: one line
"name offset size" per tensor), the five tensors with the largest relative
error are named too, so a wrong gradient shows up as a tensor.

usage: compare_grads.py REF.bin TEST.bin --tol X [--label TEXT]
exit 0 when the error is below X, 1 when not, 2 on unreadable input.
Uses numpy when it is installed, plain Python otherwise.
"""
import argparse
import math
import struct
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) % 4:
        raise ValueError(f"{path}: {len(data)} bytes is not a whole number of float32 values")
    try:
        import numpy as np

        return np.frombuffer(data, dtype="<f4").astype("f8")
    except ImportError:
        return list(struct.unpack(f"<{len(data) // 4}f", data))


def compare(ref, test):
    """(relative L2 error, max abs diff, index of max, ||ref||, the 5 worst indices)"""
    try:
        import numpy as np

        ref = np.asarray(ref)
        test = np.asarray(test)
        if not (np.all(np.isfinite(ref)) and np.all(np.isfinite(test))):
            return math.inf, math.inf, -1, float("nan"), []
        d = test - ref
        nref = float(np.linalg.norm(ref))
        err = float(np.linalg.norm(d)) / nref if nref > 0 else float(np.linalg.norm(d))
        worst = list(np.argsort(-np.abs(d))[:5])
        i = int(worst[0]) if worst else -1
        return err, float(abs(d[i])) if i >= 0 else 0.0, i, nref, [int(w) for w in worst]
    except ImportError:
        pass
    s_d = s_r = 0.0
    diffs = []
    for i, (a, b) in enumerate(zip(ref, test)):
        if not (math.isfinite(a) and math.isfinite(b)):
            return math.inf, math.inf, i, float("nan"), [i]
        s_d += (b - a) ** 2
        s_r += a * a
        diffs.append((abs(b - a), i))
    diffs.sort(reverse=True)
    nref = math.sqrt(s_r)
    err = math.sqrt(s_d) / nref if nref > 0 else math.sqrt(s_d)
    worst = [i for _, i in diffs[:5]]
    return err, diffs[0][0] if diffs else 0.0, worst[0] if worst else -1, nref, worst


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ref")
    p.add_argument("test")
    p.add_argument("--tol", type=float, required=True, help="largest relative L2 error that passes")
    p.add_argument("--label", default="", help="name of the comparison in the output")
    a = p.parse_args()
    try:
        ref, test = load(a.ref), load(a.test)
    except (OSError, ValueError) as e:
        print(f"compare_grads: {e}", file=sys.stderr)
        return 2
    if len(ref) != len(test):
        print(f"compare_grads: {a.label}: {a.ref} has {len(ref)} values, {a.test} {len(test)}",
              file=sys.stderr)
        return 1
    err, maxd, imax, nref, worst = compare(ref, test)
    ok = err < a.tol
    label = f"{a.label}: " if a.label else ""
    print(f"{label}{len(ref)} gradients, relative L2 error {err:.3e} (tolerance {a.tol:g}), "
          f"|ref| {nref:.4e}, max |diff| {maxd:.3e} at {imax} -> {'PASS' if ok else 'FAIL'}")
    if not ok:
        for i in worst:
            print(f"  [{i}] ref {ref[i]:.6e} test {test[i]:.6e}")
    for line in by_tensor(a.ref + ".tensors", ref, test):
        print(line)
    return 0 if ok else 1


def by_tensor(map_path, ref, test, show=5):
    """Lines naming the tensors with the largest relative L2 errors."""
    try:
        with open(map_path) as f:
            rows = [line.split() for line in f if line.strip()]
    except OSError:
        return []
    errs = []
    for name, off, size in rows:
        o, n = int(off), int(size)
        if o + n > len(ref):
            return [f"  (tensor map {map_path} does not fit the buffer)"]
        err, maxd, _, nref, _ = compare(ref[o:o + n], test[o:o + n])
        errs.append((err, name, n, nref, maxd))
    errs.sort(key=lambda e: -e[0] if math.isfinite(e[0]) else -math.inf)
    out = [f"  worst tensors ({len(errs)} in all):"]
    for err, name, n, nref, maxd in errs[:show]:
        out.append(f"    {name:<16} {n:>9} values  relative L2 error {err:.3e}  |ref| {nref:.3e}  "
                   f"max |diff| {maxd:.3e}")
    return out


if __name__ == "__main__":
    sys.exit(main())
