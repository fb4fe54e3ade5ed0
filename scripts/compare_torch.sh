#!/usr/bin/env bash
# Side-by-side CPU comparison of uhno's spectral and Gaussian convolutions
# with the PyTorch yardstick (../shared/yardstick), in one run on the same
# machine, as docs/PERFORMANCE.md records. Needs Debian's python3-torch;
# with --openblas it also swaps in OpenBLAS for torch (see the yardstick's
# README), which is the fairer comparison.
#
#   bash scripts/compare_torch.sh [--openblas]
set -euo pipefail
source "$(dirname "$0")/torch_env.sh"

# Our side goes through the tape (as PyTorch's autograd does): SpectralConv,
# Pointwise and SPARGate fwd and fwd+bwd; GaussianConv at T2 (two threads) fwd and tape_fwd+bwd.
GOMAXPROCS=$threads go test -run '^$' -bench '(SpectralConv|GaussianConv|Pointwise|SPARGate)/(1D_B32|2D_B16_(C32|96ch)_64x64)/^(T2|fwd)' \
  -benchtime 20x -count 3 ./internal/cpu/ | tee "$out/go.txt"
LD_LIBRARY_PATH=$ld OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$threads \
  /usr/bin/python3 scripts/torch_ops.py --yardstick "$yard" --threads "$threads" | tee "$out/torch.txt"

/usr/bin/python3 - "$out/go.txt" "$out/torch.txt" <<'PY'
import json, re, sys
go = {}
for line in open(sys.argv[1]):
    m = re.match(r"Benchmark(\w+)/(\dD)_[^/]+/(?:T2/)?(tape_fwd\+bwd|fwd\+bwd|fwd)-\d+\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        phase = m.group(3)
        if m.group(1) == "GaussianConv" and phase == "fwd+bwd":
            continue  # direct backend calls; the tape variant is the fair one
        key = (m.group(1), int(m.group(2)[0]), phase.replace("tape_", ""))
        go[key] = min(go.get(key, 1e30), float(m.group(4)) / 1e6)
names = {"SpectralConv": "spectral_conv", "GaussianConv": "gaussian_conv", "Pointwise": "pointwise", "SPARGate": "spar_gate"}
print("\n| op | dim | phase | uhno ms (min) | torch ms (min) | uhno / torch |")
print("|---|---|---|---|---|---|")
for line in open(sys.argv[2]):
    r = json.loads(line)
    for gname, tname in names.items():
        if tname != r["op"]:
            continue
        for phase, field in (("fwd", "fwd_ms_min"), ("fwd+bwd", "fwd_bwd_ms_min")):
            g = go.get((gname, r["dim"], phase))
            if g is None:
                continue
            print(f"| {gname} | {r['dim']}D | {phase} | {g:.2f} | {r[field]:.2f} | {g / r[field]:.2f} |")
PY
