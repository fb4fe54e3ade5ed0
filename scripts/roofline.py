#!/usr/bin/env python3
"""Roofline tables of a GPU kit run (issue 37), in Markdown, for docs/PERFORMANCE.md.

  python3 scripts/roofline.py docs/gpu-runs/SUMMARY.json

For every bench row of the run (more_bench: Table cost's shape before and
after, Burgers, the text's sizes, 3D): the training step's FLOPs and least
bytes (bench's counter: every operation's tensors read once and written once,
a lower bound on the traffic; FFTs at 5 N log2 N), its arithmetic intensity,
the bound time max(FLOPs / SGEMM peak, bytes / copy bandwidth) with the
card's peaks measured in the same call (scripts/gpu_peaks.py), the measured
median and the ratio measured / bound ("x from the roofline"). Then each
model's five most expensive kernels from ncu (kernel time of one bench run:
two training steps and two inference forwards at Table cost's shape).

The bound is optimistic on purpose: the SGEMM rate counts an FMA as two
flops, and most of uhno's kernels multiply and add with separate, correctly
rounded instructions (__fmul_rn, __fadd_rn: the CPU's bits), which halves
the reachable rate where they are compute-bound; the bytes assume perfect
reuse. A ratio is how far the step is from what the card could do at best,
not from what this code could.
"""
import json
import sys


def fmt_bytes(n):
    return "%.1f MB" % (n / 1e6) if n < 1e9 else "%.2f GB" % (n / 1e9)


def main(path):
    s = json.load(open(path))
    peaks = s.get("peaks") or {}
    bw, fl = peaks.get("copy_gbs"), peaks.get("fma_fp32_tflops")
    gpu = (s.get("gpu") or {}).get("name", "?")
    print("Card: %s; copy %.0f GB/s, SGEMM (TF32 off) %.1f TFLOP/s, bf16 GEMM %.0f TFLOP/s (scripts/gpu_peaks.py, same call)\n"
          % (gpu, bw or 0, fl or 0, peaks.get("bf16_tflops") or 0))
    if not bw or not fl:
        print("(no peaks in this run: no roofline)")
        return 0
    print("| bench | model | batch | params | train ms (median) | GFLOP/step | least bytes/step | FLOP/byte | bound ms | x from roofline | bound by |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for tag, rows in (s.get("more_bench") or {}).items():
        if not isinstance(rows, list):
            continue
        for r in rows:
            f, b, ms = r.get("train_flops"), r.get("train_bytes"), r.get("train_ms_median")
            if not f or not b or not ms:
                continue
            tf, tb = f / (fl * 1e12) * 1e3, b / (bw * 1e9) * 1e3
            bound = max(tf, tb)
            print("| %s | %s%s | %d | %.2fM | %.3f | %.2f | %s | %.1f | %.3f | %.1f | %s |" % (
                tag, r["name"], " (%s)" % r["precision"] if r.get("precision") else "", r["batch"], r["params"] / 1e6, ms,
                f / 1e9, fmt_bytes(b), f / b, bound, ms / bound, "memory" if tb >= tf else "compute"))
    per = s.get("ncu_models") or {}
    if per:
        print("\nThe five most expensive kernels per model (ncu, kernel time of one bench run; share of all kernel time):\n")
        print("| model | kernel time, ms | top five kernels (share) |")
        print("|---|---|---|")
        for m, r in per.items():
            tops = ", ".join("`%s` %.0f%%" % (k["kernel"], 100 * (k["share"] or 0)) for k in r["top"])
            print("| %s | %.2f | %s |" % (m, r["total_ms"], tops))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
