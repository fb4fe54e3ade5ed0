#!/usr/bin/env bash
# Everything issue 6 leaves for a GPU machine, in one run, so one device
# call does it (docs/DESIGN.md, "What is left for a GPU session"). Build
# here first, then carry bin/ to the GPU machine and run this there from
# the repository root:
#
#   make cuda cuda-test                       # on the build machine
#   bash scripts/gpu_checks.sh [OUTDIR]       # on the GPU machine (device tool: carry bin)
#
# Writes logs and JSON into OUTDIR (default $OUT, else ./gpu-checks). Each
# step runs even if an earlier one failed; the exit code is the number of
# failed steps. Needs: bin/uhno-cuda, bin/cuda.test, bin/cuda-train.test,
# nvidia-smi; optional: compute-sanitizer, python3 with torch (the
# yardstick, $YARDSTICK or ../shared/yardstick).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-${OUT:-gpu-checks}}
mkdir -p "$out"
yard=${YARDSTICK:-../shared/yardstick}
export UHNO_DATA=${UHNO_DATA:-$out/data}
failed=0

step() { # step NAME COMMAND...: run, log to OUTDIR/NAME.log, count failures
	local name=$1
	shift
	echo "== $name: $*"
	local t0=$SECONDS
	if "$@" >"$out/$name.log" 2>&1; then
		echo "   ok ($((SECONDS - t0)) s)"
	else
		echo "   FAILED ($((SECONDS - t0)) s): tail of $out/$name.log"
		tail -15 "$out/$name.log" | sed 's/^/   | /'
		failed=$((failed + 1))
	fi
}

step nvidia-smi nvidia-smi
step doctor bin/uhno-cuda doctor
# 1. Every kernel against the CPU backend, then the GPU loss curve.
step cuda-test bin/cuda.test -test.v -test.count=1
step cuda-train-test bin/cuda-train.test -test.run GPU -test.v -test.count=1
if command -v compute-sanitizer >/dev/null; then
	step memcheck compute-sanitizer --tool memcheck --error-exitcode 1 bin/cuda.test -test.count=1
	step racecheck compute-sanitizer --tool racecheck --error-exitcode 1 bin/cuda.test -test.count=1
fi
# 2. Training on the GPU beside the CPU build's log (same seed and data).
step train-gpu bin/uhno-cuda train --task burgers --params 0.62M --steps 2000 --quiet --out "$out/runs/burgers-uhno-gpu"
# 3. Speed: uhno-cuda bench beside the PyTorch yardstick, same shapes, one run.
step bench-burgers bin/uhno-cuda bench --preset burgers --json "$out/bench-burgers.json"
step bench-burgers-062 bin/uhno-cuda bench --preset burgers --params 0.62M --json "$out/bench-burgers-062.json"
step bench-ns2d bin/uhno-cuda bench --preset cost-ns2d --params 0.62M --json "$out/bench-ns2d-062.json"
step bench-spar bin/uhno-cuda bench --preset cost-spar --params 0.62M --json "$out/bench-spar.json"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null && [ -f "$yard/bench_torch.py" ]; then
	step torch-burgers python3 "$yard/bench_torch.py" --dim 1 --n 128 --batch 32 --device cuda --steps 100 --warmup 20
	step torch-burgers-compile python3 "$yard/bench_torch.py" --dim 1 --n 128 --batch 32 --device cuda --steps 100 --warmup 20 --compile
	step torch-ns2d python3 "$yard/bench_torch.py" --dim 2 --n 128 --batch 16 --device cuda --steps 50 --warmup 10
	step torch-ns2d-compile python3 "$yard/bench_torch.py" --dim 2 --n 128 --batch 16 --device cuda --steps 50 --warmup 10 --compile
fi
echo "$failed step(s) failed; logs in $out"
exit "$failed"
