#!/usr/bin/env bash
# Compare one forward pass of a trained 1D checkpoint with the PyTorch
# yardstick holding the same weights (see scripts/compare_forward.py).
#   scripts/compare_forward.sh runs/burgers-uhno [N]
set -euo pipefail
ck=$(realpath "$1")
n=${2:-64}
source "$(dirname "${BASH_SOURCE[0]}")/torch_env.sh"
go run ./scripts/forward_dump -checkpoint "$ck" -n "$n" -out "$out/fwd"
/usr/bin/python3 -W ignore scripts/compare_forward.py "$out/fwd" "$yard"
rm -rf "$out"
