"""Time one training step of the PyTorch yardstick (forward, the loss of
Eq. loss, backward, AdamW) at the configurations of uhno's
BenchmarkTrainStep (internal/train/bench_test.go), for
scripts/compare_train_step.sh. Burgers: batch 32, N = 128, K0 = 24, L = 3;
NS-2D: batch 16, 64x64, 10 frames in, K0 = 12, L = 3, at the 0.62M budget
(U-HNO C0 = 3 with 3 sigma groups, as uhno's UHNOForBudget picks; FNO
width 16).
Prints one JSON line per configuration with min and median milliseconds.
"""
import argparse
import json
import statistics
import sys
import time

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--yardstick", default="../shared/yardstick")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    sys.path.insert(0, a.yardstick)
    import uhno_torch as U

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    # (name, task, dim, input, target, build): names as BenchmarkTrainStep's.
    cases = (("burgers/uhno-C0=32", "burgers", 1, (32, 1, 128), (32, 1, 128),
              lambda: U.build_model("burgers", "full", 1, 1, C0=32, groups=4)),
             ("burgers/uhno-C0=10", "burgers", 1, (32, 1, 128), (32, 1, 128),
              lambda: U.build_model("burgers", "full", 1, 1, C0=10, groups=2)),
             ("burgers/fno-width=58", "burgers", 1, (32, 1, 128), (32, 1, 128),
              lambda: U.FNO(1, 1, 1, 58, 24)),
             ("ns2d/uhno-C0=3", "ns2d", 2, (16, 10, 64, 64), (16, 1, 64, 64),
              lambda: U.build_model("ns2d", "full", 10, 1, C0=3, groups=3)),
             ("ns2d/fno-width=16", "ns2d", 2, (16, 10, 64, 64), (16, 1, 64, 64),
              lambda: U.FNO(2, 10, 1, 16, 12)))
    for name, task, dim, xs, ys, build in cases:
        lam_h1, lam_cbc = U.loss_weights(task, "full")
        x, y = torch.randn(*xs), torch.randn(*ys)
        model = build()
        is_uhno = isinstance(model, U.UHNO)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)

        def step():
            opt.zero_grad(set_to_none=True)
            pred, aux = model(x)
            if is_uhno:
                loss, _ = U.uhno_loss(pred, y, aux, dim, lam_h1, lam_cbc)
            else:
                loss = torch.nn.functional.mse_loss(pred, y)
            loss.backward()
            opt.step()

        for _ in range(a.warmup):
            step()
        ts = []
        for _ in range(a.steps):
            t0 = time.perf_counter()
            step()
            ts.append((time.perf_counter() - t0) * 1e3)
        print(json.dumps(dict(name=name, params=U.count_params(model), torch=torch.__version__,
                              threads=torch.get_num_threads(), ms_min=round(min(ts), 3),
                              ms_med=round(statistics.median(ts), 3))))


if __name__ == "__main__":
    main()
