#!/usr/bin/env bash
# Side-by-side CPU comparison of one training step (forward, loss,
# backward, AdamW) of uhno and the PyTorch yardstick, in one run on the
# same machine (docs/PERFORMANCE.md): Burgers (the main job and the 0.62M
# budget) and NS-2D 64x64 at the 0.62M budget. With --openblas, torch uses OpenBLAS
# instead of Debian's reference BLAS (the fairer comparison).
#
#   bash scripts/compare_train_step.sh [--openblas]
set -euo pipefail
source "$(dirname "$0")/torch_env.sh"

GOMAXPROCS=$threads go test -run '^$' -bench 'TrainStep' -benchtime 10x -count 3 ./internal/train/ | tee "$out/go.txt"
LD_LIBRARY_PATH=$ld OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$threads \
  /usr/bin/python3 scripts/torch_train_step.py --yardstick "$yard" --threads "$threads" | tee "$out/torch.txt"

/usr/bin/python3 - "$out/go.txt" "$out/torch.txt" <<'PY'
import json, re, sys
go = {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkTrainStep/(\S+?)-\d+\s+\d+\s+([\d.]+) ns/op\s+(\d+) params", line)
    if m:
        go[m.group(1)] = (min(go.get(m.group(1), (1e30,))[0], float(m.group(2)) / 1e6), int(m.group(3)))
print("\n| configuration | parameters (uhno / torch) | uhno ms (min) | torch ms (min) | uhno / torch |")
print("|---|---|---|---|---|")
for line in open(sys.argv[2]):
    r = json.loads(line)
    g = go.get(r["name"])
    if g:
        print(f"| {r['name']} | {g[1]:,} / {r['params']:,} | {g[0]:.1f} | {r['ms_min']:.1f} | {g[0] / r['ms_min']:.2f} |")
PY
