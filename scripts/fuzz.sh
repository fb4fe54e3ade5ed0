#!/usr/bin/env bash
# fuzz.sh runs every Go fuzz target of the repository, one after another,
# for FUZZTIME seconds each (default 10), and prints each target's result
# and a summary line. It exits non-zero when a target fails; the failing
# input is then in the package's testdata/fuzz/<Target>/ (commit it once
# the reader is fixed: go test runs it as a regression test).
#
# The targets are found, not listed: every `func FuzzXxx(f *testing.F)` in
# a *_fuzz_test.go file. Usage:
#
#   bash scripts/fuzz.sh                 # every target, 10 s each
#   FUZZTIME=60 bash scripts/fuzz.sh     # longer
#   bash scripts/fuzz.sh Checkpoint      # the targets whose names contain it
#
# Minimization is off (-fuzzminimizetime 0): it shrinks each new input
# for up to a minute, which stalls a short run (large seeds such as the
# built-in configurations stalled workers for most of a 60 s run), and in
# one such run the failure found was lost when -fuzztime ran out during
# it. A failing input is kept as found.
set -uo pipefail
export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime=${FUZZTIME:-10}
case $fuzztime in
'' | *[!0-9]*)
	echo "fuzz.sh: FUZZTIME=$fuzztime, want a whole number of seconds" >&2
	exit 2
	;;
esac
filter=${1:-}

# Targets as "package function", in file order.
targets=()
while IFS= read -r file; do
	pkg=$(dirname "$file")
	while IFS= read -r name; do
		if [ -z "$filter" ] || [[ $name == *"$filter"* ]]; then
			targets+=("$pkg $name")
		fi
	done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$file")
done < <(find . -name '*_fuzz_test.go' -not -path './.git/*' -not -path './.cache/*' | sort)
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets${filter:+ matching $filter}" >&2
	exit 2
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
failed=()
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	t0=$SECONDS
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "${fuzztime}s" -fuzzminimizetime 0 "$pkg" >"$log" 2>&1
	rc=$?
	# On a loaded machine the fuzz engine can run out of time while it is
	# still measuring the seed corpus' coverage, before fuzzing at all, and
	# then fails with "context deadline exceeded" and no failing input.
	# That is not a finding: run the target once more with twice the time.
	if [ $rc -ne 0 ] && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
		echo "      $name: the fuzz engine timed out before fuzzing (a loaded machine); once more with $((2 * fuzztime))s"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$((2 * fuzztime))s" -fuzzminimizetime 0 "$pkg" >"$log" 2>&1
		rc=$?
	fi
	took=$((SECONDS - t0))
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	if [ $rc -eq 0 ]; then
		printf 'ok    %-24s %-22s %4ds  %s execs\n' "$name" "$pkg" "$took" "${execs:-?}"
	else
		printf 'FAIL  %-24s %-22s %4ds\n' "$name" "$pkg" "$took"
		grep -v '^fuzz: elapsed' "$log" | sed 's/^/      /' | head -40
		failed+=("$name")
	fi
done

total=${#targets[@]}
if [ ${#failed[@]} -eq 0 ]; then
	echo "fuzz: $total targets, all passed, ${fuzztime}s each, $((SECONDS - start))s in all"
	exit 0
fi
echo "fuzz: $total targets, ${#failed[@]} failed (${failed[*]}), ${fuzztime}s each, $((SECONDS - start))s in all"
exit 1
