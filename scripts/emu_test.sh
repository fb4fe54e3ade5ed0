#!/usr/bin/env bash
# Runs the CUDA backend's tests on the CPU under the emulator
# (internal/cuda/emu, build tag cudaemu): every kernel against the CPU
# backend, the determinism and graph-replay tests, and the short training
# runs whose loss curves must follow the CPU's. It runs the kernel suite
# once per thread order (forward, reverse, and a seeded shuffle), so a
# missing __syncthreads or a shared-memory race that one order hides fails
# under another, then prints how many tests ran under the emulator. The
# training runs (internal/train's GPU tests, 80 s an order) run in the
# first order only: they compose the kernels the kernel suite checks in
# every order. What that gives up: an order dependence that shows only at
# a training run's shapes and not at any kernel test's (D-ci-time);
# EMU_TRAIN_ALL=1 runs them in every order.
#
#   bash scripts/emu_test.sh            # all orders
#   EMU_ORDERS="reverse" bash scripts/emu_test.sh
#
# Exit status: non-zero if any run failed.
set -uo pipefail
export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
orders=${EMU_ORDERS:-forward reverse shuffle:20261124}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
passed=0 failed=0 status=0
for order in $orders; do
	echo "== cudaemu tests, thread order $order"
	t0=$SECONDS
	UHNO_EMU_ORDER=$order go test -count=1 -tags cudaemu -v ./internal/cuda/ >"$log/cuda.log" 2>&1
	rc1=$?
	rc2=0
	: >"$log/train.log"
	if [ "$order" = "${orders%% *}" ] || [ -n "${EMU_TRAIN_ALL:-}" ]; then
		UHNO_EMU_ORDER=$order go test -count=1 -tags cudaemu -v -run 'GPU' ./internal/train/ >"$log/train.log" 2>&1
		rc2=$?
	fi
	p=$(cat "$log/cuda.log" "$log/train.log" | grep -c '^--- PASS')
	f=$(cat "$log/cuda.log" "$log/train.log" | grep -c '^--- FAIL')
	# A test binary the emulator stopped (an out-of-range access ends the
	# process) reports no --- FAIL line: count each such package as one.
	for rc in $rc1 $rc2; do
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	done
	if [ $rc1 -ne 0 ] && [ $rc2 -ne 0 ] && [ "$f" -lt 2 ]; then f=2; fi
	passed=$((passed + p)) failed=$((failed + f))
	echo "   $p passed, $f failed ($((SECONDS - t0)) s)"
	if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
		status=1
		for l in cuda train; do
			if grep -q -e '^--- FAIL' -e '^FAIL' -e 'panic:' -e 'cudaemu:' "$log/$l.log"; then
				echo "   --- $l log (failures):"
				if grep -q -e '^--- FAIL' -e 'panic:' -e 'cudaemu: kernel' "$log/$l.log"; then
					# the failing tests, their messages, and any crash line
					grep -E -e '--- FAIL' -e '^\s+\S+_test\.go:[0-9]+: ' -e 'panic:' -e 'cudaemu: ' "$log/$l.log" |
						grep -v -e 'on both backends' -e 'kernels launched' | head -40 | sed 's/^/   | /'
				else
					tail -20 "$log/$l.log" | sed 's/^/   | /'
				fi
			fi
		done
	fi
done
echo "cudaemu: $passed passed, $failed failed"
exit $status
