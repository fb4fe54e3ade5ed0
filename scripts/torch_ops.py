"""Time the PyTorch yardstick's spectral convolution and depthwise Gaussian
convolution at the sizes of uhno's Go benchmarks, for the side-by-side
comparison in docs/PERFORMANCE.md (run by scripts/compare_torch.sh).

Shapes match BenchmarkSpectralConv and BenchmarkGaussianConv in
internal/cpu: 2D B=16, C=32, 64x64, K0=12; 1D B=32, C=32, N=128, K0=24;
Gaussian: M=3 scales x C=32 channels, G=4 groups, sigma init 0.5/1/2.5.
Also the 1x1 channel mixing (Pointwise) and the SPAR gate of one level.
Prints one JSON line per (op, dim) with min and median milliseconds.
"""
import argparse
import json
import statistics
import sys
import time

import torch


def timed(fn, steps, warmup):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return min(ts), statistics.median(ts)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--yardstick", default="../shared/yardstick")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    sys.path.insert(0, a.yardstick)
    import uhno_torch as U

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    for dim, B, C, N, K in ((1, 32, 32, 128, 24), (2, 16, 32, 64, 12)):
        sp = (N,) * dim
        # Spectral convolution: the yardstick's SpectralConv module.
        spec = U.SpectralConv(C, C, K, dim)
        x = torch.randn((B, C) + sp, requires_grad=True)

        def spec_fwd():
            with torch.no_grad():
                spec(x)

        def spec_fb():
            y = spec(x)
            y.backward(torch.ones_like(y))

        # Depthwise Gaussian convolution of all M=3 scales (no 1x1 mixers),
        # gradient to the input and to log sigma.
        g = U.GaussianBranch(C, dim)
        radii = g.support_radii()
        xs = [torch.randn((B, C) + sp, requires_grad=True) for _ in range(3)]

        def gauss_fwd():
            with torch.no_grad():
                for m in range(3):
                    g.gauss_conv(xs[m], m, min(radii[m], (N - 1) // 2))

        def gauss_fb():
            ys = [g.gauss_conv(xs[m], m, min(radii[m], (N - 1) // 2)) for m in range(3)]
            sum((y * y).sum() for y in ys).backward()

        # 1x1 channel mixing with bias, and the whole SPAR gate of one level
        # (score MLP on [zF; zG], keep-ratio, top-k, STE MUX), as in the
        # yardstick's bench_ops.py.
        pw = U.conv1x1(C, C, dim)
        xp = torch.randn((B, C) + sp, requires_grad=True)
        gate = U.SPARGate(C, dim)
        xg = torch.randn((B, 2 * C) + sp, requires_grad=True)

        def pw_fwd():
            with torch.no_grad():
                pw(xp)

        def pw_fb():
            y = pw(xp)
            y.backward(torch.ones_like(y))

        def gate_fwd():
            with torch.no_grad():
                gate(xg[:, :C], xg[:, C:])

        def gate_fb():
            y = gate(xg[:, :C], xg[:, C:])[0]
            y.backward(torch.ones_like(y))

        for name, f, fb in (("spectral_conv", spec_fwd, spec_fb), ("gaussian_conv", gauss_fwd, gauss_fb),
                            ("pointwise", pw_fwd, pw_fb), ("spar_gate", gate_fwd, gate_fb)):
            tf = timed(f, a.steps, a.warmup)
            tfb = timed(fb, a.steps, a.warmup)
            print(json.dumps(dict(op=name, dim=dim, torch=torch.__version__, threads=torch.get_num_threads(),
                                  fwd_ms_min=round(tf[0], 3), fwd_ms_med=round(tf[1], 3),
                                  fwd_bwd_ms_min=round(tfb[0], 3), fwd_bwd_ms_med=round(tfb[1], 3))))


if __name__ == "__main__":
    main()
