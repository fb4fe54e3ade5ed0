"""Train the PyTorch yardstick's U-HNO (or mode F, or FNO) on a uhno Burgers
file with the paper's recipe, printing the held-out single-step MSE every
500 steps: an independent training of the same model, for
docs/RESULTS.md ("Why: the paper's hard routing, not an error in uhno").

    /usr/bin/python3 scripts/torch_train_burgers.py --data FILE.h5 --mode full --steps 3000

Data: the file's trajectories split by a seeded permutation (first 1,000
test, next 1,000 train), normalised by the training mean and std; pairs
(u_t, u_{t+1}). Recipe: AdamW (lr 1e-3, weight decay 1e-4), 1,000 warm-up
steps then cosine over 20,000 (stopped at --steps), batch 32, the loss of
Eq. loss (MSE + 1e-3 H1 + 5e-3 CBC; FNO: MSE). Needs python3-torch and
python3-h5py.
"""
import argparse
import json
import math
import sys
import time

import h5py
import numpy as np
import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--mode", default="full", help="full, A..I, or fno")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--yardstick", default="../shared/yardstick")
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    sys.path.insert(0, a.yardstick)
    import uhno_torch as U

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    u = h5py.File(a.data, "r")["tensor"][:]
    n, nt, nx = u.shape
    perm = rng.permutation(n)
    test, train = u[perm[:1000]], u[perm[1000:2000]]
    mu, sd = train.mean(), train.std()
    train, test = (train - mu) / sd, (test - mu) / sd
    X = torch.tensor(train[:, :-1].reshape(-1, 1, nx))
    Y = torch.tensor(train[:, 1:].reshape(-1, 1, nx))
    vi = rng.choice(test.shape[0] * (nt - 1), 256, replace=False)
    VX = torch.tensor(test[:, :-1].reshape(-1, 1, nx)[vi])
    VY = torch.tensor(test[:, 1:].reshape(-1, 1, nx)[vi])
    fno = a.mode == "fno"
    model = U.FNO(1, 1, 1, 58, 24) if fno else U.build_model("burgers", a.mode, 1, 1, C0=10, groups=2)
    lam_h1, lam_cbc = U.loss_weights("burgers", "full" if fno else a.mode)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / 1000 if s < 1000 else 0.5 * (1 + math.cos(math.pi * (s - 1000) / 19000)))
    t0 = time.time()
    for s in range(a.steps):
        idx = torch.randint(0, X.shape[0], (32,))
        pred, aux = model(X[idx])
        if fno:
            loss = torch.nn.functional.mse_loss(pred, Y[idx])
        else:
            loss, _ = U.uhno_loss(pred, Y[idx], aux, 1, lam_h1, lam_cbc)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if (s + 1) % 500 == 0:
            with torch.no_grad():
                pv, av = model(VX)
                v = torch.nn.functional.mse_loss(pv, VY).item()
            print(json.dumps(dict(step=s + 1, params=U.count_params(model), loss=loss.item(), val_mse=v,
                                  rho=[round(float(r.mean()), 3) for r in av.get("rho", [])],
                                  elapsed_s=round(time.time() - t0, 1))), flush=True)


if __name__ == "__main__":
    main()
