"""Sweep tensor- and pipeline-parallel sizes for Llama 3 70B on 256 H100s in
two threads, print the step time and MFU of each layout that fits, and plot
them when matplotlib is installed.

    make lib && PYTHONPATH=python python3 python/examples/sweep_layouts.py
"""
import itertools
import sys
from concurrent.futures import ThreadPoolExecutor

import scaleplan


def one(layout):
    tp, pp = layout
    try:
        r = scaleplan.sim(model="llama3-70b", gpu="h100-sxm", gpus=256, tp=tp, pp=pp,
                          global_batch=512, sequence_parallel=tp > 1,
                          distributed_optimizer=True, recompute="selective")
        return tp, pp, r["step_time_s"], r["mfu"], None
    except scaleplan.Error as e:  # a layout that does not fit, or one refused
        return tp, pp, None, None, e.message.split(": ", 1)[-1]


def main():
    layouts = list(itertools.product((1, 2, 4, 8), (1, 2, 4, 8)))
    with ThreadPoolExecutor(max_workers=2) as pool:  # one context per thread
        rows = list(pool.map(one, layouts))
    print("  TP  PP     step     MFU")
    for tp, pp, step, mfu, why in rows:
        if step is None:
            print("%4d %3d  %s" % (tp, pp, why[:70]))
        else:
            print("%4d %3d  %6.2f s  %5.1f%%" % (tp, pp, step, 100 * mfu))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)", file=sys.stderr)
        return
    fits = [r for r in rows if r[2] is not None]
    plt.scatter([r[2] for r in fits], [100 * r[3] for r in fits])
    for tp, pp, step, mfu, _ in fits:
        plt.annotate("TP%d PP%d" % (tp, pp), (step, 100 * mfu))
    plt.xlabel("step time (s)")
    plt.ylabel("MFU (% of bf16 dense peak)")
    plt.savefig("sweep_layouts.png", dpi=120)
    print("wrote sweep_layouts.png")


if __name__ == "__main__":
    main()
