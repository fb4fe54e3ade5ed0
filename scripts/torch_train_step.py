"""Time one training step of the PyTorch yardstick (forward, the loss of
Eq. loss, backward, AdamW) at the configurations of uhno's
BenchmarkTrainStep (internal/train/bench_test.go), for
scripts/compare_train_step.sh. Burgers: batch 32, N = 128, K0 = 24, L = 3.
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
    lam_h1, lam_cbc = U.loss_weights("burgers", "full")
    x, y = torch.randn(32, 1, 128), torch.randn(32, 1, 128)
    cases = (("burgers/uhno-C0=32", lambda: U.build_model("burgers", "full", 1, 1, C0=32, groups=4)),
             ("burgers/uhno-C0=10", lambda: U.build_model("burgers", "full", 1, 1, C0=10, groups=2)),
             ("burgers/fno-width=58", lambda: U.FNO(1, 1, 1, 58, 24)))
    for name, build in cases:
        model = build()
        is_uhno = isinstance(model, U.UHNO)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)

        def step():
            opt.zero_grad(set_to_none=True)
            pred, aux = model(x)
            if is_uhno:
                loss, _ = U.uhno_loss(pred, y, aux, 1, lam_h1, lam_cbc)
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
