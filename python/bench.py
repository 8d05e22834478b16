"""make bench's library section: a GPT-3 175B step (Korthikanti et al. 2022
Table 5's layout on 64 A100s: TP8 PP8, sequence parallel, selective
recompute, micro-batch 1, global batch 64, 2,048 tokens) through the Python
module, median over 1,000 calls in one context (target: under 0.5 ms), and
a sweep of 512 such calls on one thread against two threads with a context
each, 256 a thread (target: at least 1.7x; ctypes releases the GIL during
each call, so the two run at once), of documents (sim: the spec's JSON and
the document's parse hold the GIL) and of step times (step_time, the fast
path for loops). A benchmark, not a test: it prints figures."""
import statistics
import threading
import time

import scaleplan

SPEC = dict(model="gpt3-175b", gpu="a100-80g", gpus=64, tp=8, pp=8, micro_batch=1,
            global_batch=64, seq_len=2048, sequence_parallel=True, recompute="selective")


def one_thread(ctx, n, fast=False):
    call = ctx.step_time if fast else ctx.sim
    for _ in range(n):
        call(**SPEC)


def sweep(fast):
    """Seconds of 512 calls on one thread, and on two with a context each."""
    ctxs = [scaleplan.Context(), scaleplan.Context()]
    for c in ctxs:
        c.sim(**SPEC)
    t = time.perf_counter()
    one_thread(ctxs[0], 512, fast)
    t1 = time.perf_counter() - t
    threads = [threading.Thread(target=one_thread, args=(c, 256, fast)) for c in ctxs]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return t1, time.perf_counter() - t


def main():
    ctx = scaleplan.Context()
    ctx.sim(**SPEC)
    times = []
    for _ in range(1000):
        t = time.perf_counter()
        ctx.sim(**SPEC)
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    print("library: 175B step from Python %.3f ms median over 1000 calls (target < 0.5 ms)"
          % (1e3 * med))
    fast = []
    for _ in range(1000):
        t = time.perf_counter()
        ctx.step_time(**SPEC)
        fast.append(time.perf_counter() - t)
    print("library: the same step through the fast path (sp_step_time, called through "
          "ctypes) %.3f ms median over 1000 calls (target < 0.1 ms)" % (1e3 * statistics.median(fast)))
    for fast, what in ((False, "documents (sim)"), (True, "step times (step_time)")):
        t1, t2 = sweep(fast)
        print("library: 512 %s on 1 thread %.1f ms, on 2 threads %.1f ms: %.2fx "
              "(target >= 1.7x)" % (what, 1e3 * t1, 1e3 * t2, t1 / t2))


if __name__ == "__main__":
    main()
