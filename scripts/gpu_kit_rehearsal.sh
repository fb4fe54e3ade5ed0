#!/usr/bin/env bash
# Rehearses scripts/gpu_checks.sh on this machine, with no GPU: the same
# script against the emulator build (bin/uhno-emu and the cudaemu test
# binaries), a short fake deadline, shortened caps and a step forced to hang,
# then checks what a GPU run must bring back: summary.json is valid JSON and
# lists every step, the hang step was cut off and reported as timed_out,
# steps past the deadline were skipped, the run ended within its deadline,
# and logs.tgz holds the logs. `make gpu-kit-rehearsal`; CI runs the short
# form (REHEARSAL_SHORT=1).
#
# Env: REHEARSAL_DEADLINE (s, default 120; short form 45),
# REHEARSAL_SHORT=1 (no .gpukit is built: the kit's training and torch
# steps are skipped), REHEARSAL_DIR (default /tmp/gpu-kit-rehearsal).
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
short=${REHEARSAL_SHORT:-0}
deadline=${REHEARSAL_DEADLINE:-$([ "$short" = 1 ] && echo 45 || echo 120)}
dir=${REHEARSAL_DIR:-/tmp/gpu-kit-rehearsal}
rm -rf "$dir"
mkdir -p "$dir/out" bin

echo "rehearsal: building the emulator binaries"
$GO generate ./internal/cuda/emu
$GO build -tags cudaemu -o bin/uhno-emu ./cmd/uhno
$GO test -c -tags cudaemu -o bin/cuda-emu.test ./internal/cuda
$GO test -c -tags cudaemu -o bin/cuda-train-emu.test ./internal/train

kit=.gpukit
if [ "$short" = 1 ]; then
	kit=$dir/kit # empty: train/torch steps are skipped for want of the kit
	mkdir -p "$kit"
elif [ ! -f .gpukit/train.args ]; then
	echo "rehearsal: no .gpukit yet; building its CPU part (GPU_KIT_SKIP_CUDA=1 scripts/gpu_kit.sh)"
	GPU_KIT_SKIP_CUDA=1 bash scripts/gpu_kit.sh
fi

echo "rehearsal: scripts/gpu_checks.sh, deadline $deadline s, a step forced to hang (cap 4 s)"
t0=$SECONDS
set +e
OUT=$dir/out GPU_KIT_WORK=$dir/work GPU_KIT_DIR=$kit GPU_CHECKS_DEADLINE=$deadline GPU_KIT_RESERVE=8 \
	GPU_KIT_SCALE=0.25 GPU_KIT_HANG=4 \
	GPU_KIT_UHNO=bin/uhno-emu GPU_KIT_CUDA_TEST=bin/cuda-emu.test GPU_KIT_TRAIN_TEST=bin/cuda-train-emu.test \
	GPU_KIT_NCCL_TEST=bin/none GPU_KIT_CUDA_TEST_RUN='^(TestElementwise|TestAdamW|TestMSE|TestDiff)$' \
	bash scripts/gpu_checks.sh
rc=$?
set -e
took=$((SECONDS - t0))
echo "rehearsal: gpu_checks.sh exited $rc after $took s (deadline $deadline s)"

s=$dir/out/summary.json
python3 -m json.tool "$s" >/dev/null
echo "rehearsal: $s is valid JSON; $dir/out holds: $(ls "$dir/out" | tr '\n' ' ')"
tar -tzf "$dir/out/logs.tgz" | sed 's/^/  logs.tgz: /' | head -40
python3 - "$s" "$deadline" "$took" "$rc" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
deadline, took, rc = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
steps = {x["name"]: x for x in s["steps"]}
for x in s["steps"]:
    print("  %-22s %-10s %4d s  %s" % (x["name"], x["status"], x["seconds"], x.get("note", "")))
print("  counts:", s["counts"], "tests:", {k: (v or {}).get("pass") for k, v in s["tests"].items()},
      "fail:", {k: (v or {}).get("fail") for k, v in s["tests"].items()})
if s.get("ptxas"):
    print("  ptxas:", {k: v for k, v in s["ptxas"].items() if k != "over_64_registers"})
bad = []
if steps.get("hang", {}).get("status") != "timed_out":
    bad.append("the hang step was not reported as timed_out")
if not any(x["status"] == "skipped" for x in s["steps"]):
    bad.append("no step was skipped")
if took > deadline + 5:
    bad.append("ran %d s, past its deadline of %d s" % (took, deadline))
if rc != s["counts"]["failed"] + s["counts"]["timed_out"]:
    bad.append("exit status %d is not the number of failed and timed-out steps" % rc)
for need in ("env", "doctor", "cuda-test", "train-gpu", "memcheck", "racecheck"):
    if need not in steps:
        bad.append("no record of step " + need)
if bad:
    sys.exit("rehearsal FAILED: " + "; ".join(bad))
print("rehearsal: ok (deadline kept, hang cut off, skips recorded, summary and logs written)")
EOF
