#!/usr/bin/env python3
"""The card's measured peaks for the roofline of docs/PERFORMANCE.md (issue 37).

Run on the GPU machine by scripts/gpu_checks.sh (step "peaks"), with the
machine's PyTorch; writes one JSON object:

  copy_gbs       device-to-device copy of a 1 GiB float32 tensor, bytes read
                 plus bytes written per second (the memory bound)
  fma_fp32_tflops  float32 matrix product 8192^3 with TF32 off (cuBLAS SGEMM:
                 the FMA pipes' float32 rate as a library reaches it; uhno's
                 kernels compute in float32 without tensor cores)
  bf16_tflops    the same product in bfloat16 (tensor cores), for reference:
                 uhno's bf16 autocast rounds operands but multiplies on the
                 float32 pipes, so its bound stays fma_fp32_tflops

Each figure is the best of --repeats timed runs after two discarded, timed
with CUDA events. Nothing here is uhno's code: the peaks belong to the card.
"""
import argparse
import json
import sys


def best_ms(torch, fn, repeats):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 1
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "repeats": args.repeats}

    n = 1 << 28  # 1 GiB of float32
    x = torch.empty(n, device="cuda", dtype=torch.float32).uniform_()
    y = torch.empty_like(x)
    ms = best_ms(torch, lambda: y.copy_(x), args.repeats)
    out["copy_gbs"] = 2 * 4 * n / (ms * 1e-3) / 1e9
    del x, y

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    m = 8192
    a = torch.randn(m, m, device="cuda", dtype=torch.float32)
    b = torch.randn(m, m, device="cuda", dtype=torch.float32)
    ms = best_ms(torch, lambda: torch.matmul(a, b), args.repeats)
    out["fma_fp32_tflops"] = 2 * m**3 / (ms * 1e-3) / 1e12
    a16, b16 = a.bfloat16(), b.bfloat16()
    ms = best_ms(torch, lambda: torch.matmul(a16, b16), args.repeats)
    out["bf16_tflops"] = 2 * m**3 / (ms * 1e-3) / 1e12
    del a, b, a16, b16

    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
