#!/usr/bin/env bash
# Side-by-side CPU comparison of one training step (forward, loss,
# backward, AdamW) of uhno and the PyTorch yardstick, in one run on the
# same machine (docs/PERFORMANCE.md): Burgers (the main job and the 0.62M
# budget) and NS-2D 64x64 at the 0.62M budget. With --openblas, torch uses OpenBLAS
# instead of Debian's reference BLAS (the fairer comparison).
#
# Both sides take 3 untimed warm-up steps and time 30 single steps; the
# table compares the fastest and the median single step of each (before
# 2026-11-26, uhno's figure was the best mean of 10 steps with the first,
# cold step inside it, against torch's fastest single step: still printed,
# last column).
#
#   bash scripts/compare_train_step.sh [--openblas]
set -euo pipefail
source "$(dirname "$0")/torch_env.sh"

GOMAXPROCS=$threads go test -run '^$' -bench 'TrainStep' -benchtime 10x -count 3 ./internal/train/ | tee "$out/go.txt"
LD_LIBRARY_PATH=$ld OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$threads \
  /usr/bin/python3 scripts/torch_train_step.py --yardstick "$yard" --threads "$threads" --warmup 3 --steps 30 | tee "$out/torch.txt"

/usr/bin/python3 - "$out/go.txt" "$out/torch.txt" <<'PY'
# Like with like: each side's fastest and median single step, after 3
# untimed warm-up steps, over 30 timed steps (Go: 3 counts of 10, the
# median the middle of the counts' medians; torch: one run of 30). The
# mean of the Go side (ns/op) is printed too.
import json, re, statistics, sys
go = {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkTrainStep/(\S+?)-\d+\s+\d+\s+(.*)$", line)
    if not m:
        continue
    # "value unit" pairs, in the order go test prints them (ns/op first,
    # then the custom metrics sorted by unit)
    f = m.group(2).split()
    v = {f[i + 1]: float(f[i]) for i in range(0, len(f) - 1, 2)}
    if not {"ns/op", "ms-min", "ms-med", "params"} <= v.keys():
        continue
    g = go.setdefault(m.group(1), {"mean": [], "min": [], "med": [], "params": int(v["params"])})
    g["mean"].append(v["ns/op"] / 1e6)
    g["min"].append(v["ms-min"])
    g["med"].append(v["ms-med"])
print("\n| configuration | parameters (uhno / torch) | uhno ms (min step) | torch ms (min step) | uhno / torch (min) | uhno ms (median) | torch ms (median) | uhno / torch (median) | uhno mean of 10 (best count) |")
print("|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[2]):
    r = json.loads(line)
    g = go.get(r["name"])
    if g:
        gmin, gmed = min(g["min"]), statistics.median(g["med"])
        print(f"| {r['name']} | {g['params']:,} / {r['params']:,} | {gmin:.1f} | {r['ms_min']:.1f} | {gmin / r['ms_min']:.2f} | "
              f"{gmed:.1f} | {r['ms_med']:.1f} | {gmed / r['ms_med']:.2f} | {min(g['mean']):.1f} |")
PY
