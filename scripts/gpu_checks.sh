#!/usr/bin/env bash
# The first GPU run, in one device call under a deadline (issue 24;
# `go doc ./internal/cuda`, "Checking on a GPU: the kit"). Build the kit here
# with `make gpu-kit`, carry what it prints (bin/uhno-cuda bin/cuda.test
# bin/cuda-train.test [bin/nccl.test] .gpukit), and run from the repository
# root on the GPU machine:
#
#   GPU_CHECKS_DEADLINE=480 bash scripts/gpu_checks.sh
#
# Steps run in order of priority; each runs under `timeout` of the smaller
# of its cap and the time left, and is "skipped" when too little is left or
# when the machine lacks its tool (nvidia-smi, ptxas, torch,
# compute-sanitizer, ncu). An EXIT trap always writes $OUT/summary.json (per
# step: status ok/failed/timed_out/skipped and seconds; test counts, ms per
# step of uhno and torch eager/compile, steps/s and loss against the CPU
# curve, sanitizer error counts, ncu's per-kernel times) and $OUT/logs.tgz
# (every step's log, tailed when large). Nothing else goes to $OUT: the
# work folder is $GPU_KIT_WORK (default /tmp/gpu-kit).
#
# Env: GPU_CHECKS_DEADLINE (s, default 480); OUT (default ./gpu-checks);
# GPU_CHECKS_ONLY / GPU_CHECKS_SKIP (regexes of step names to run / skip);
# GPU_KIT_UHNO, GPU_KIT_CUDA_TEST, GPU_KIT_TRAIN_TEST, GPU_KIT_NCCL_TEST
# (the binaries; the rehearsal points them at the emulator build);
# GPU_KIT_CUDA_TEST_RUN (a -test.run filter for the kernel tests);
# GPU_KIT_HANG=N inserts a step `sleep 1000` capped at N s (rehearsal);
# GPU_KIT_SCALE (default 1) multiplies every cap (rehearsal: small).
# Exit status: the number of failed or timed-out steps.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
T0=$SECONDS
DEADLINE=${GPU_CHECKS_DEADLINE:-480}
RESERVE=${GPU_KIT_RESERVE:-12} # seconds kept for the trap
OUT=${OUT:-$PWD/gpu-checks}
KIT=${GPU_KIT_DIR:-.gpukit}
WORK=${GPU_KIT_WORK:-/tmp/gpu-kit}
SCALE=${GPU_KIT_SCALE:-1}
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
UHNO=$(abs "${GPU_KIT_UHNO:-bin/uhno-cuda}")
CUDA_TEST=$(abs "${GPU_KIT_CUDA_TEST:-bin/cuda.test}")
TRAIN_TEST=$(abs "${GPU_KIT_TRAIN_TEST:-bin/cuda-train.test}")
NCCL_TEST=$(abs "${GPU_KIT_NCCL_TEST:-bin/nccl.test}")
KIT=$(abs "$KIT")
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK/logs" "$WORK/runs"
LOGS=$WORK/logs
STEPS=$WORK/steps.tsv
: >"$STEPS"
export UHNO_DATA=$KIT/data KIT LOGS
FAILED=0

finish() {
	trap - EXIT INT TERM
	local py
	py=$(command -v python3 || true)
	if [ -n "$py" ]; then
		timeout 20 "$py" scripts/gpu_kit.py summary "$WORK" "$KIT" "$DEADLINE" "$((SECONDS - T0))" \
			>"$OUT/summary.json" 2>"$LOGS/summary-error.log" || py=
	fi
	if [ -z "$py" ]; then # no python3 (or it failed): the steps table alone, from the shell
		{
			printf '{"deadline_s": %s, "elapsed_s": %s, "summary_error": true, "steps": [' "$DEADLINE" "$((SECONDS - T0))"
			awk -F'\t' 'BEGIN{s=""} {printf "%s{\"name\":\"%s\",\"status\":\"%s\",\"seconds\":%s,\"rc\":%s}", s, $1, $2, $3, $4; s=","}' "$STEPS"
			printf ']}\n'
		} >"$OUT/summary.json"
	fi
	cp "$OUT/summary.json" "$LOGS/summary.json"
	cp "$WORK"/bench-*.json "$WORK"/peaks.json "$LOGS"/ 2>/dev/null
	tar -C "$WORK" -czf "$OUT/logs.tgz" logs 2>/dev/null
	echo "== summary: $OUT/summary.json, logs: $OUT/logs.tgz ($(du -k "$OUT/logs.tgz" | cut -f1) KiB); $FAILED step(s) failed or timed out; $((SECONDS - T0)) s of $DEADLINE"
	exit "$FAILED"
}
trap finish EXIT
trap 'echo "gpu_checks: interrupted" >&2; exit 130' INT TERM

left() { echo $((DEADLINE - RESERVE - (SECONDS - T0))); }

record() { # record NAME STATUS SECONDS RC NOTE
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-}" >>"$STEPS"
}

# skip NAME WHY: record a step that does not run.
skip() {
	echo "== $1: skipped ($2)"
	record "$1" skipped 0 -1 "$2"
}

# step NAME CAP MIN COMMAND...: run COMMAND under timeout min(CAP*SCALE,
# time left), logging to $LOGS/NAME.log; skipped if under MIN s are left.
# Sets STEP_RC.
step() {
	local name=$1 cap=$2 min=$3
	shift 3
	cap=$(awk -v c="$cap" -v s="$SCALE" 'BEGIN{c=int(c*s+0.5); if (c<1) c=1; print c}')
	local l
	l=$(left)
	if [ -n "${GPU_CHECKS_ONLY:-}" ] && ! [[ $name =~ $GPU_CHECKS_ONLY ]]; then
		skip "$name" "not in GPU_CHECKS_ONLY=$GPU_CHECKS_ONLY"
		STEP_RC=-1
		return
	fi
	if [ -n "${GPU_CHECKS_SKIP:-}" ] && [[ $name =~ $GPU_CHECKS_SKIP ]]; then
		skip "$name" "in GPU_CHECKS_SKIP=$GPU_CHECKS_SKIP"
		STEP_RC=-1
		return
	fi
	if [ "$l" -lt "$min" ] || [ "$l" -lt 1 ]; then
		skip "$name" "deadline: ${l} s left, needs ${min}"
		STEP_RC=-1
		return
	fi
	[ "$cap" -gt "$l" ] && cap=$l
	echo "== $name (cap ${cap} s): $*"
	# a shell function runs in a child bash (timeout runs programs only)
	if declare -F "$1" >/dev/null; then
		export -f "$1"
		set -- bash -c '"$@"' _ "$@"
	fi
	local t=$SECONDS
	timeout -k 5 "$cap" "$@" >"$LOGS/$name.log" 2>&1
	STEP_RC=$?
	local dt=$((SECONDS - t)) status=ok
	case $STEP_RC in
	0) ;;
	124 | 137) status=timed_out ;;
	*) status=failed ;;
	esac
	if [ "$status" != ok ] && grep -q -E 'Device not supported|not supported on this|ERR_NVGPUCTRPERM|LibraryNotLoaded|Failed to initialize the profiler|Unable to find injection library' "$LOGS/$name.log" 2>/dev/null &&
		[[ $name == memcheck* || $name == racecheck* || $name == ncu* ]]; then
		status=skipped # the tool does not work on this machine
	fi
	[ "$status" = failed ] || [ "$status" = timed_out ] && FAILED=$((FAILED + 1))
	echo "   $status (${dt} s, rc $STEP_RC)"
	[ "$status" = ok ] || tail -8 "$LOGS/$name.log" | sed 's/^/   | /'
	trim "$LOGS/$name.log"
	record "$name" "$status" "$dt" "$STEP_RC"
}

# trim FILE: keep a log small (first 40 KB and last 160 KB).
trim() {
	local f=$1
	[ -f "$f" ] || return 0
	if [ "$(stat -c %s "$f")" -gt 204800 ]; then
		{ head -c 40960 "$f"; printf '\n... [trimmed] ...\n'; tail -c 163840 "$f"; } >"$f.t" && mv "$f.t" "$f"
	fi
}

have() { command -v "$1" >/dev/null 2>&1; }
export -f have

# intest DIR COMMAND...: run in a package folder, as go test would (tests
# read files relative to their package, e.g. ../../kernels/spar.cu).
intest() {
	cd "$1" || return 1
	shift
	exec "$@"
}

# ---- 0. environment: GPU, driver, cuFFT and NCCL on this machine ----------
envcheck() {
	echo "date: $(date -u)"
	echo "host: $(uname -a)"
	if have nvidia-smi; then nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; else echo "no nvidia-smi"; fi
	echo "python3: $(command -v python3) $(python3 --version 2>&1)"
	for t in ptxas nvcc compute-sanitizer ncu; do echo "$t: $(command -v $t || echo absent)"; done
	echo "UHNO_CUFFT=${UHNO_CUFFT:-}"
	echo "UHNO_NCCL=${UHNO_NCCL:-}"
	ls -la bin "$KIT" 2>&1 | head -30
}
# findlib PATTERN: the first match in the python wheels, CUDA folders, ldconfig.
findlib() {
	local pat=$1 f d
	f=$(ldconfig -p 2>/dev/null | awk -v p="$pat" '$1 ~ p {print $NF; exit}')
	[ -n "$f" ] && { echo "$f"; return; }
	for d in $(timeout 10 python3 -c 'import site; print(" ".join(p + "/nvidia" for p in site.getsitepackages()))' 2>/dev/null) \
		/opt/torch/.venv/lib/python3*/site-packages/nvidia /usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib /usr/lib/x86_64-linux-gnu /usr/local/lib; do
		[ -d "$d" ] || continue
		f=$(timeout 10 find "$d" -name "$pat*" -name '*.so*' 2>/dev/null | sort | head -1)
		[ -n "$f" ] && { echo "$f"; return; }
	done
}
[ -n "${UHNO_CUFFT:-}" ] || { UHNO_CUFFT=$(findlib libcufft.so); [ -n "$UHNO_CUFFT" ] && export UHNO_CUFFT; }
[ -n "${UHNO_NCCL:-}" ] || { UHNO_NCCL=$(findlib libnccl.so); [ -n "$UHNO_NCCL" ] && export UHNO_NCCL; }
# ptxas, ncu, compute-sanitizer may sit outside PATH
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin /opt/nvidia/nsight-compute/*; do
	[ -d "$d" ] && PATH="$PATH:$d"
done
export PATH
step env 20 3 envcheck
if have nvidia-smi; then
	step nvidia-smi-q 10 3 nvidia-smi -q
fi

if [ -n "${GPU_KIT_HANG:-}" ]; then
	step hang "$GPU_KIT_HANG" 1 sleep 1000
fi

# ---- 1. the committed PTX through ptxas for sm_90 -------------------------
ptxcheck() {
	local f rc=0
	for f in internal/cuda/ptx/*.ptx; do
		echo "### $f"
		ptxas -arch=sm_90 -v "$f" -o /dev/null 2>&1 || { echo "PTXAS ERROR: $f"; rc=1; }
	done
	return $rc
}
if have ptxas; then step ptxas 60 10 ptxcheck; else skip ptxas "no ptxas"; fi

# ---- 2. doctor -------------------------------------------------------------
step doctor 30 5 "$UHNO" doctor

# ---- 3. every kernel against the CPU backend ------------------------------
if [ -x "$CUDA_TEST" ]; then
	runf=()
	[ -n "${GPU_KIT_CUDA_TEST_RUN:-}" ] && runf=(-test.run "$GPU_KIT_CUDA_TEST_RUN")
	step cuda-test 150 20 intest internal/cuda "$CUDA_TEST" -test.v -test.count=1 "${runf[@]}"
	if [ "$STEP_RC" -ne 0 ] && [ "$STEP_RC" -ne -1 ]; then
		# the failing tests (or, after a crash, the test that was running)
		fails=$(grep -E '^--- FAIL: ' "$LOGS/cuda-test.log" | awk '{print $3}' | sort -u | head -20 | paste -sd'|')
		[ -n "$fails" ] || fails=$(grep -E '^=== RUN ' "$LOGS/cuda-test.log" | grep -v / | tail -1 | awk '{print $3}')
		if [ -n "$fails" ]; then
			echo "$fails" >"$WORK/failing-tests"
			CUDA_LAUNCH_BLOCKING=1 step cuda-test-rerun 60 10 intest internal/cuda "$CUDA_TEST" -test.v -test.count=1 -test.failfast -test.run "^($fails)\$"
			first=${fails%%|*}
			if have compute-sanitizer; then
				step memcheck-failing 60 15 intest internal/cuda compute-sanitizer --tool memcheck --error-exitcode 1 "$CUDA_TEST" -test.v -test.count=1 -test.run "^$first\$"
			else skip memcheck-failing "no compute-sanitizer"; fi
		fi
	fi
else skip cuda-test "no $CUDA_TEST"; fi

# ---- 4. the GPU training tests --------------------------------------------
if [ -x "$TRAIN_TEST" ]; then
	step cuda-train-test 90 15 intest internal/train "$TRAIN_TEST" -test.run GPU -test.v -test.count=1
else skip cuda-train-test "no $TRAIN_TEST"; fi

# ---- 5. NCCL one rank ------------------------------------------------------
if [ -x "$NCCL_TEST" ]; then
	step nccl-test 30 5 intest internal/cuda/nccl "$NCCL_TEST" -test.v -test.count=1
else skip nccl-test "no $NCCL_TEST"; fi

# ---- 5a. issue 37: the card's peaks, every model before and after the
# kernel rewrites (an older binary alternated with this one), each model's
# most expensive kernels (ncu over one bench run), the text's sizes, bf16,
# and the two device faults. scripts/roofline.py turns the JSON into
# PERFORMANCE's tables.
OLD=
if [ -f "$KIT/uhno-cuda-old.xz" ]; then
	OLD=$WORK/uhno-cuda-old
	if { have xz && xz -dc "$KIT/uhno-cuda-old.xz" >"$OLD"; } ||
		python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' "$KIT/uhno-cuda-old.xz" "$OLD"; then
		chmod +x "$OLD"
	else OLD=; fi
fi
if have python3 && timeout 30 python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
	step peaks 60 10 python3 scripts/gpu_peaks.py --json "$WORK/peaks.json"
else skip peaks "no torch with CUDA for the peak microbenchmarks"; fi
cost() { # cost BIN TAG: Table cost's shape at 0.62M and Burgers at 0.62M
	"$1" bench --preset cost-ns2d --params 0.62M --repeats 20 --warmup 5 --quiet --json "$WORK/bench-$2-cost-ns2d.json" &&
		"$1" bench --task burgers --params 0.62M --repeats 30 --warmup 5 --quiet --json "$WORK/bench-$2-burgers.json"
}
export -f cost
export WORK
step cost-new 120 30 cost "$UHNO" new
if [ -n "$OLD" ]; then
	step cost-old 120 30 cost "$OLD" old
	step cost-new2 120 30 cost "$UHNO" new2
else skip cost-old "no older binary in the kit (GPU_KIT_OLD)"; fi
# the same shapes with each training step replayed as a CUDA graph, as
# uhno train runs it (bench --graph): how much of a step is host launches
step cost-graph 120 30 bash -c '"$0" bench --preset cost-ns2d --params 0.62M --repeats 20 --warmup 5 --quiet --graph --json "$1/bench-graph-cost-ns2d.json" &&
	"$0" bench --task burgers --params 0.62M --repeats 30 --warmup 5 --quiet --graph --json "$1/bench-graph-burgers.json"' "$UHNO" "$WORK"
# fault 1: a step beyond the card stops before training, in one line
fault_oom() {
	local out rc
	# U-HNO with C0 = 320 (668M parameters) on the kit's Burgers data at
	# batch 3,200 (all its training pairs): --dry-run's plan asks about
	# 195 GiB, beyond an H100's or H200's memory
	out=$("$UHNO" train --task burgers --set model.c0=320 --batch 3200 --steps 2 \
		--set data.train_trajectories=64 --set data.test_trajectories=16 --val-pairs 256 --val-every 0 \
		--dynamics-every 0 --data "$KIT/data" --out "$WORK/runs/oom" --quiet 2>&1)
	rc=$?
	echo "rc $rc"
	echo "$out"
	[ "$rc" -ne 0 ] && [ "$(printf '%s\n' "$out" | grep -c .)" -le 3 ] && ! grep -q -e 'goroutine' -e 'panic' <<<"$out" &&
		grep -q 'needs .* more on cuda' <<<"$out" && [ ! -e "$WORK/runs/oom/latest" ]
}
# fault 2: SIGKILL inside a checkpoint save and at a moment in a step,
# each followed by --resume, against an uninterrupted run (same bits?)
fault_kill() {
	local args=("${TRAIN_ARGS[@]}") i rc n=0
	for i in "${!args[@]}"; do [ "${args[$((i - 1))]}" = --steps ] && n=${args[$i]}; done
	[ "$n" -ge 4 ] || { echo "fault_kill: no --steps of at least 4 in the kit's train.args"; return 1; }
	for i in "${!args[@]}"; do [ "${args[$((i - 1))]}" = --ckpt-every ] && args[i]=$((n / 4)); done
	local final half=$((n / 2))
	final=$(printf 'step-%08d' "$n")
	"$UHNO" "${args[@]}" --data "$KIT/data" --out "$WORK/runs/kill-whole" || return 1
	UHNO_TEST_CRASH_IN_CHECKPOINT=mid-weights@$half "$UHNO" "${args[@]}" --data "$KIT/data" --out "$WORK/runs/kill-save"
	echo "killed in step $half's save: rc $? (137 expected), latest $(cat "$WORK/runs/kill-save/latest" 2>/dev/null)"
	"$UHNO" train --resume "$WORK/runs/kill-save" --data "$KIT/data" --quiet || return 1
	# the second kill lands in a step: once the log shows a step past 3/4
	# of the run (a GPU trains the kit's 200 steps in about a second, so a
	# kill by the clock can come after the end)
	"$UHNO" "${args[@]}" --data "$KIT/data" --out "$WORK/runs/kill-step" &
	local pid=$! at=$((3 * n / 4)) seen=0
	while kill -0 "$pid" 2>/dev/null; do
		seen=$(grep -o '"step":[0-9]*' "$WORK/runs/kill-step/log.jsonl" 2>/dev/null | tail -1 | cut -d: -f2)
		[ "${seen:-0}" -ge "$at" ] && break
		sleep 0.01
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	echo "killed after the log showed step ${seen:-0} (aimed past $at): rc $? (137: killed in a step; 0: it had finished), latest $(cat "$WORK/runs/kill-step/latest" 2>/dev/null)"
	if [ -f "$WORK/runs/kill-step/latest" ]; then
		"$UHNO" train --resume "$WORK/runs/kill-step" --data "$KIT/data" --quiet || return 1
	else
		"$UHNO" "${args[@]}" --data "$KIT/data" --out "$WORK/runs/kill-step" || return 1
	fi
	rc=0
	for r in kill-save kill-step; do
		for f in weights.safetensors optimizer.safetensors; do
			a=$(sha256sum <"$WORK/runs/kill-whole/$final/$f" | cut -c1-16)
			b=$(sha256sum <"$WORK/runs/$r/$final/$f" 2>/dev/null | cut -c1-16)
			echo "same_bits $r $f $([ "$a" = "$b" ] && echo true || echo false) $a $b"
		done
		python3 scripts/gpu_kit.py lastloss "$WORK/runs/kill-whole/log.jsonl" "$WORK/runs/$r/log.jsonl" || true
		[ -f "$WORK/runs/$r/$final/weights.safetensors" ] || rc=1
	done
	return $rc
}
TRAIN_ARGS=()
[ -f "$KIT/train.args" ] && mapfile -t TRAIN_ARGS <"$KIT/train.args"
export UHNO KIT
step fault-oom 60 10 fault_oom
if [ ${#TRAIN_ARGS[@]} -gt 0 ]; then
	export -f fault_kill
	TRAIN_ARGS_Q=$(printf '%q ' "${TRAIN_ARGS[@]}")
	step fault-kill 90 20 bash -c "TRAIN_ARGS=($TRAIN_ARGS_Q); fault_kill"
else skip fault-kill "no $KIT/train.args (make gpu-kit)"; fi
# per model: the five most expensive kernels (ncu, kernel time only)
if have ncu; then
	for m in uhno fno wno ffno loglofno convfno cno gno; do
		step "ncu-$m" 45 15 ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-count 3000 \
			"$UHNO" bench --preset cost-ns2d --model "$m" --params 0.62M --repeats 1 --warmup 1 --quiet
	done
	step ncu-burgers-uhno 45 15 ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-count 3000 \
		"$UHNO" bench --task burgers --model uhno --params 0.62M --repeats 1 --warmup 1 --quiet
else skip ncu-models "no ncu"; fi
# the text's sizes (U-HNO and FNO), and 3D in fp32 and bf16
step bench-text 120 20 bash -c '"$0" bench --task ns2d --params text --repeats 10 --warmup 3 --quiet --json "$1/bench-text-ns2d.json" &&
	"$0" bench --task burgers --params text --repeats 20 --warmup 5 --quiet --json "$1/bench-text-burgers.json"' "$UHNO" "$WORK"
step bench-cfd3d-fp32 90 20 "$UHNO" bench --task cfd3d --batch 1 --precision fp32 --repeats 5 --warmup 2 --quiet --json "$WORK/bench-cfd3d-fp32.json"
step bench-cfd3d-bf16 90 20 "$UHNO" bench --task cfd3d --batch 1 --precision bf16 --repeats 5 --warmup 2 --quiet --json "$WORK/bench-cfd3d-bf16.json"

# ---- 6. speed: uhno bench beside torch eager, matched sizes ---------------
torch_ok=0
if [ -f "$KIT/yardstick/bench_torch.py" ] && [ "$(left)" -gt 40 ] && timeout 30 python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
	torch_ok=1
fi
torch_bench() { # torch_bench TASK [--compile]: bench_torch.py with the kit's matched flags
	local task=$1
	shift
	# shellcheck disable=SC2046
	PYTHONUNBUFFERED=1 python3 scripts/torch_bench_matched.py --yardstick "$KIT/yardstick" $(cat "$KIT/torch-$task.flags") \
		--device cuda --steps 50 --warmup 10 "$@"
}
for task in burgers ns2d; do
	step "bench-$task" 60 10 "$UHNO" bench --task "$task" --params 0.62M --repeats 30 --warmup 5 --json "$WORK/bench-$task.json"
	if [ $torch_ok = 1 ] && [ -f "$KIT/torch-$task.flags" ]; then
		step "torch-$task" 60 15 torch_bench "$task"
	else skip "torch-$task" "no torch with CUDA, or no yardstick in $KIT"; fi
done

# ---- 7. a short GPU training run beside the CPU's curve -------------------
TRAIN_ARGS=()
[ -f "$KIT/train.args" ] && mapfile -t TRAIN_ARGS <"$KIT/train.args"
if [ ${#TRAIN_ARGS[@]} -gt 0 ]; then
	step train-gpu 90 20 "$UHNO" "${TRAIN_ARGS[@]}" --data "$KIT/data" --out "$WORK/runs/train-gpu"
	cp "$WORK/runs/train-gpu/log.jsonl" "$LOGS/train-gpu.log.jsonl" 2>/dev/null
else skip train-gpu "no $KIT/train.args (make gpu-kit)"; fi

# ---- 8. torch.compile ------------------------------------------------------
for task in burgers ns2d; do
	if [ $torch_ok = 1 ] && [ -f "$KIT/torch-$task.flags" ]; then
		step "torch-compile-$task" 120 40 torch_bench "$task" --compile
	else skip "torch-compile-$task" "no torch with CUDA, or no yardstick"; fi
done

# ---- 9. per-kernel times (ncu) over a few training steps ------------------
if have ncu && [ ${#TRAIN_ARGS[@]} -gt 0 ]; then
	args=("${TRAIN_ARGS[@]}")
	for i in "${!args[@]}"; do [ "${args[$i]}" = 200 ] && [ "${args[$((i - 1))]}" = --steps ] && args[i]=3; done
	step ncu 60 20 ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-count 600 \
		--target-processes all "$UHNO" "${args[@]}" --graph=false --data "$KIT/data" --out "$WORK/runs/ncu"
else skip ncu "no ncu, or no $KIT/train.args"; fi

# ---- 10. CUDA graph against --graph=false ---------------------------------
if [ ${#TRAIN_ARGS[@]} -gt 0 ]; then
	step train-gpu-nograph 90 20 "$UHNO" "${TRAIN_ARGS[@]}" --graph=false --data "$KIT/data" --out "$WORK/runs/train-gpu-nograph"
	cp "$WORK/runs/train-gpu-nograph/log.jsonl" "$LOGS/train-gpu-nograph.log.jsonl" 2>/dev/null
fi

# ---- 11. sanitizers: memcheck with exact allocations, racecheck -----------
# One test per kernel file (memcheck), the shared-memory kernels (racecheck:
# conv3, dense, depthwise, gaussian, small, spar, stencil).
MEMCHECK_TESTS='TestBandAxisBits|TestBandResampleOp|TestAdamW|TestChannelCopy|TestConv3|TestConvDown|TestDepthwiseConv|TestDiff|TestElementwise|TestGaussianConv|TestMSE|TestMeanStd|TestPointwise|TestUpsample2x|TestTopKMask|TestSPARKeep|TestSpectralConv|TestSpectralConvList|TestStencilMessage|TestWavelet'
RACECHECK_TESTS='TestBandAxisBits|TestConv3|TestPointwise|TestDepthwiseConv|TestGaussianConv|TestMSE|TestMeanStd|TestTopKMask|TestStencilMessage'
if have compute-sanitizer && [ -x "$CUDA_TEST" ]; then
	UHNO_ALLOC_EXACT=1 step memcheck 90 20 intest internal/cuda compute-sanitizer --tool memcheck --error-exitcode 1 \
		"$CUDA_TEST" -test.v -test.count=1 -test.run "^($MEMCHECK_TESTS)\$"
	step racecheck 75 20 intest internal/cuda compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 1 \
		"$CUDA_TEST" -test.v -test.count=1 -test.run "^($RACECHECK_TESTS)\$"
else
	skip memcheck "no compute-sanitizer, or no $CUDA_TEST"
	skip racecheck "no compute-sanitizer, or no $CUDA_TEST"
fi

# ---- 12. more speed: every model at Table cost's shape, the text's size, 3D
step bench-cost-ns2d 150 30 "$UHNO" bench --preset cost-ns2d --params 0.62M --repeats 20 --warmup 5 --json "$WORK/bench-cost-ns2d.json"
step bench-burgers-text 60 15 "$UHNO" bench --preset burgers --repeats 20 --warmup 5 --json "$WORK/bench-burgers-text.json"
# 3D at the configuration's size, batch 1 (--params 0.62M cannot be met in 3D; batch 2
# needs 85-96 GB, over an H100's 80)
step bench-cfd3d 90 20 "$UHNO" bench --task cfd3d --batch 1 --repeats 10 --warmup 3 --json "$WORK/bench-cfd3d.json"

# ---- 13. an older uhno-cuda beside this one, alternated (same call, card) --
# The kit carries it compressed (GPU_KIT_OLD at `make gpu-kit`); its version
# is in $KIT/uhno-cuda-old.version.
if [ -f "$KIT/uhno-cuda-old.xz" ]; then
	OLD=$WORK/uhno-cuda-old
	if { have xz && xz -dc "$KIT/uhno-cuda-old.xz" >"$OLD"; } ||
		python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' "$KIT/uhno-cuda-old.xz" "$OLD"; then
		chmod +x "$OLD"
		for task in burgers ns2d; do
			step "bench-old-$task" 45 10 "$OLD" bench --task "$task" --params 0.62M --repeats 30 --warmup 5 --json "$WORK/bench-old-$task.json"
			step "bench-new-$task" 45 10 "$UHNO" bench --task "$task" --params 0.62M --repeats 30 --warmup 5 --json "$WORK/bench-new-$task.json"
		done
	else skip bench-old "could not decompress $KIT/uhno-cuda-old.xz"; fi
else skip bench-old "no older binary in the kit (GPU_KIT_OLD)"; fi

# ---- 14. a 2,000-step GPU training run beside the CPU's -------------------
LONG_ARGS=()
[ -f "$KIT/train-long.args" ] && mapfile -t LONG_ARGS <"$KIT/train-long.args"
if [ ${#LONG_ARGS[@]} -gt 0 ]; then
	step train-gpu-long 90 20 "$UHNO" "${LONG_ARGS[@]}" --data "$KIT/data" --out "$WORK/runs/train-gpu-long"
	cp "$WORK/runs/train-gpu-long/log.jsonl" "$LOGS/train-gpu-long.log.jsonl" 2>/dev/null
else skip train-gpu-long "no $KIT/train-long.args (make gpu-kit)"; fi
exit "$FAILED"
