#!/usr/bin/env bash
# Builds the kit for the first GPU run (issue 24; `make gpu-kit`), on this
# machine, without a GPU and without re-running nvcc:
#   bin/uhno-cuda, bin/cuda.test, bin/cuda-train.test (and bin/nccl.test
#     when internal/cuda/nccl has tests): -tags cuda, stripped, HDF5 linked
#     statically; `readelf -d` must show no shared library beyond libcuda,
#     libm, libc, libdl and libpthread (cuFFT and NCCL are dlopen'ed);
#   .gpukit/ (ignored by git): the PyTorch yardstick, the CPU reference
#     training log of the GPU run's exact command, its (small) data set,
#     uhno's CPU bench JSON and the matched torch flags taken from it.
# Then prints the device command and the carry list, and measures them.
#
# Env: VERSION, CUDA_CGO_LDFLAGS (from the Makefile), YARDSTICK (default
# ../shared/yardstick, else /work/shared/yardstick), GPU_KIT_SKIP_CUDA=1
# (only the .gpukit part; for the rehearsal), GPU_KIT_LONG=0 (no 2,000-step
# CPU reference), GPU_KIT_OLD=FILE (an older uhno-cuda to time beside this
# one).
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
kit=.gpukit
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
CUDA_CGO_LDFLAGS=${CUDA_CGO_LDFLAGS:--Wl,-Bstatic -lhdf5_serial_hl -lhdf5_serial -lsz -laec -lz -Wl,-Bdynamic -lm -ldl}
log() { echo "gpu-kit: $*" >&2; }

# The GPU training run and its CPU reference: one command, kept in the kit
# so that both sides run exactly the same arguments (the data are carried).
TRAIN_ARGS=(train --task burgers --params 0.62M --steps 200 --log-every 10
	--set data.train_trajectories=64 --set data.test_trajectories=16
	--val-every 0 --val-pairs 256 --dynamics-every 0 --ckpt-every 0 --quiet)

# The same command for 2,000 steps: does the GPU's curve stay on the CPU's
# over a longer run (float32 sums in another order drift)?
LONG_ARGS=("${TRAIN_ARGS[@]}")
for i in "${!LONG_ARGS[@]}"; do
	[ "${LONG_ARGS[$i]}" = 200 ] && [ "${LONG_ARGS[$((i - 1))]}" = --steps ] && LONG_ARGS[i]=2000
	[ "${LONG_ARGS[$i]}" = 10 ] && [ "${LONG_ARGS[$((i - 1))]}" = --log-every ] && LONG_ARGS[i]=100
done

if [ "${GPU_KIT_SKIP_CUDA:-0}" != 1 ]; then
	log "building the cuda binaries (stripped, static HDF5)"
	if [ ! -f /usr/include/cuda.h ]; then
		flags=$(bash scripts/cuda_headers.sh)
		eval "$flags"
	fi
	export CGO_LDFLAGS="${CGO_LDFLAGS:-} $CUDA_CGO_LDFLAGS"
	ld="-s -w -X main.version=$VERSION"
	$GO build -tags cuda -ldflags "$ld" -o bin/uhno-cuda ./cmd/uhno
	$GO test -c -tags cuda -ldflags "-s -w" -o bin/cuda.test ./internal/cuda
	$GO test -c -tags cuda -ldflags "-s -w" -o bin/cuda-train.test ./internal/train
	bins=(bin/uhno-cuda bin/cuda.test bin/cuda-train.test)
	if ls internal/cuda/nccl/*_test.go >/dev/null 2>&1; then
		$GO test -c -tags cuda -ldflags "-s -w" -o bin/nccl.test ./internal/cuda/nccl
		bins+=(bin/nccl.test)
	fi
	# Shared libraries: only the driver's libcuda and glibc's. libdl comes
	# from CUDA_CGO_LDFLAGS (HDF5's plugin loader and the dlopen of cuFFT and
	# NCCL); libpthread may appear with older glibc (cgo's runtime).
	bad=0
	for b in "${bins[@]}"; do
		needed=$(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
		log "$b needs: $needed"
		for lib in $needed; do
			case $lib in
			libcuda.so.1 | libm.so.6 | libc.so.6 | libdl.so.2 | libpthread.so.0) ;;
			*) log "ERROR: $b needs $lib, which the GPU machine may lack"; bad=1 ;;
			esac
		done
	done
	[ $bad = 0 ] || exit 1
fi

rm -rf "$kit"
mkdir -p "$kit/yardstick"
yard=${YARDSTICK:-../shared/yardstick}
[ -f "$yard/bench_torch.py" ] || yard=/work/shared/yardstick
if [ -f "$yard/bench_torch.py" ]; then
	cp "$yard/bench_torch.py" "$yard/uhno_torch.py" "$kit/yardstick/"
	[ -f "$yard/bench_ops.py" ] && cp "$yard/bench_ops.py" "$kit/yardstick/"
else
	log "WARNING: no yardstick found (YARDSTICK=...): the torch steps will be skipped"
fi
printf '%s\n' "${TRAIN_ARGS[@]}" >"$kit/train.args"

log "CPU reference: ${TRAIN_ARGS[*]} (data generated into $kit/data)"
t0=$SECONDS
bin/uhno "${TRAIN_ARGS[@]}" --data "$kit/data" --out "$kit/tmp-run-cpu" >"$kit/train-cpu.txt" 2>&1 ||
	{ tail -20 "$kit/train-cpu.txt" >&2; exit 1; }
cp "$kit/tmp-run-cpu/log.jsonl" "$kit/train-cpu.log.jsonl"
rm -rf "$kit/tmp-run-cpu"
echo "$((SECONDS - t0))" >"$kit/train-cpu.seconds"
if [ "${GPU_KIT_LONG:-1}" = 1 ]; then
	log "CPU reference, long: ${LONG_ARGS[*]}"
	printf '%s\n' "${LONG_ARGS[@]}" >"$kit/train-long.args"
	bin/uhno "${LONG_ARGS[@]}" --data "$kit/data" --out "$kit/tmp-run-cpu" >"$kit/train-cpu-long.txt" 2>&1 ||
		{ tail -20 "$kit/train-cpu-long.txt" >&2; exit 1; }
	cp "$kit/tmp-run-cpu/log.jsonl" "$kit/train-cpu-long.log.jsonl"
	rm -rf "$kit/tmp-run-cpu"
fi

# An older uhno-cuda to time beside this one on the same card (GPU_KIT_OLD:
# its path; carried xz-compressed, about a third of its size).
if [ -n "${GPU_KIT_OLD:-}" ]; then
	xz -T2 -6 -c "$GPU_KIT_OLD" >"$kit/uhno-cuda-old.xz"
	strings "$GPU_KIT_OLD" | sed -n 's/.*-X main.version=\([^ "]*\).*/\1/p' | head -1 >"$kit/uhno-cuda-old.version"
	log "older binary: $GPU_KIT_OLD, version $(cat "$kit/uhno-cuda-old.version")"
fi

log "CPU bench at 0.62M (sizes for the torch yardstick)"
for task in burgers ns2d; do
	bin/uhno bench --task "$task" --params 0.62M --repeats 2 --warmup 1 --threads "$(nproc)" \
		--json "$kit/bench-$task-cpu.json" >"$kit/bench-$task-cpu.txt" 2>&1 ||
		{ tail -20 "$kit/bench-$task-cpu.txt" >&2; exit 1; }
	bin/uhno config --task "$task" >"$kit/config-$task.yaml"
	python3 scripts/gpu_kit.py torch-flags "$kit/bench-$task-cpu.json" "$kit/bench-$task-cpu.txt" \
		"$kit/config-$task.yaml" >"$kit/torch-$task.flags"
	log "torch flags for $task: $(cat "$kit/torch-$task.flags")"
done

kitb=$(du -cb bin/uhno-cuda bin/cuda.test bin/cuda-train.test bin/nccl.test "$kit" 2>/dev/null | tail -1 | cut -f1)
treeb=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | awk '$2 == "total" {s += $1} END {print s + 0}')
carry="bin/uhno-cuda bin/cuda.test bin/cuda-train.test$([ -f bin/nccl.test ] && echo " bin/nccl.test") .gpukit"
cat <<EOF

== GPU kit ready ==
device command (one call, timeout_s 540 or more; the script stops itself at GPU_CHECKS_DEADLINE, default 480 s):
  GPU_CHECKS_DEADLINE=480 bash scripts/gpu_checks.sh
carry: $carry
size: carried $((kitb / 1024)) KiB (bin/*cuda* + .gpukit) + tracked tree $((treeb / 1024)) KiB = $(((kitb + treeb) / 1024 / 1024)) MiB of the 64 MiB limit
brings back: \$OUT/summary.json and \$OUT/logs.tgz (nothing else is written to \$OUT)
EOF
if [ $((kitb + treeb)) -gt $((60 * 1024 * 1024)) ]; then
	log "ERROR: the kit is over 60 MiB (the device call carries 64 MiB at most)"
	exit 1
fi
