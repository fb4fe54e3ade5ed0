#!/usr/bin/env python3
"""Runs the PyTorch yardstick's bench_torch.py with U-HNO's sigma groups set.

bench_torch.py has no flag for the Gaussian branch's sigma groups and
builds U-HNO with 4, which must divide C0; uhno scales C0 to a parameter
budget (C0 = 10 at 0.62M on Burgers, 3 on NS-2D) and takes the largest
divisor of C0 not above 4 (model.UHNOForBudget). This wrapper takes
--yardstick DIR and --groups G, patches uhno_torch.build_model to pass
groups=G, and hands every other argument to bench_torch.py unchanged, so
both implementations time the same architecture.

  python3 scripts/torch_bench_matched.py --yardstick .gpukit/yardstick --groups 2 [bench_torch.py flags]
"""
import argparse
import os
import runpy
import sys

p = argparse.ArgumentParser(add_help=False)
p.add_argument("--yardstick", required=True)
p.add_argument("--groups", type=int, default=4)
a, rest = p.parse_known_args()
sys.path.insert(0, os.path.abspath(a.yardstick))
import uhno_torch as U  # noqa: E402  (the module bench_torch.py imports)

_build = U.build_model


def build_model(*args, **kw):
    kw.setdefault("groups", a.groups)
    return _build(*args, **kw)


U.build_model = build_model
script = os.path.join(a.yardstick, "bench_torch.py")
sys.argv = [script] + rest
runpy.run_path(script, run_name="__main__")
