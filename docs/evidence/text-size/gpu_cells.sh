#!/bin/bash
# Issue 39, evidence block 1 on a lent GPU: the NS-2D cells at the text's
# size (PLAN.md beside this file, fixed 2026-11-27 before any run) in one
# or more device calls, trained AND evaluated on the card (a 64M-parameter
# checkpoint with its AdamW moments is about 770 MB and does not travel
# back; only results, reports and logs do).
#
# The cells: the grid `reproduce --tables main-acc,ablation-extra --tasks
# ns2d --models uhno,fno,convfno --modes F --params text --schedule cpu5k`
# (Full, FNO width 167, Conv-FNO, mode F: four runs, the same settings as
# the CPU cells), then the small control, FNO width 64 (`train --width
# 64`, the same schedule). Full is trained again here although its CPU run
# exists (RESULTS, "The paper's own protocol"): every model of one table
# then comes from one device, and Full's CPU and GPU results side by side
# say how much the device moves a text-size run.
#
# Run from the repository root, bin/uhno-cuda built beforehand (make cuda):
#   DEADLINE=540 bash docs/evidence/text-size/gpu_cells.sh
# Rerunning resumes: finished cells are skipped, a stopped one continues
# from its checkpoint (the device tool keeps ignored paths such as .gpurun
# while the machine stays warm; on a fresh machine everything restarts).
# Env: BIN (bin/uhno-cuda), LANES (2), DEADLINE (seconds from the start at
# which the trainings are stopped, STOP_LEFT (40) s early, checkpointed),
# FINISH_LEFT (120: the evaluations run only with more than this left),
# WORK (.gpurun, git-ignored), OUT (the device tool's $OUT), SMALL=1 (a
# rehearsal: 3 steps on tiny data, `--params 0.62M`).
set -u
t0=$(date +%s)
BIN=${BIN:-bin/uhno-cuda}
LANES=${LANES:-2}
DEADLINE=${DEADLINE:-540}
WORK=${WORK:-.gpurun}
OUT=${OUT:-/tmp/gpurun-out}
mkdir -p "$WORK" "$OUT"
log() { echo "[$(($(date +%s) - t0))s] $*" | tee -a "$OUT/run.log"; }
left() { echo $((DEADLINE - ($(date +%s) - t0))); }

small=() params=text
if [ "${SMALL:-0}" = 1 ]; then
	small=(--set data.train_trajectories=4 --set data.test_trajectories=2 --set data.snapshots=22 --set pde.t_end=21 --steps 3)
	params=0.62M
fi
F=(--tables main-acc,ablation-extra --tasks ns2d --models uhno,fno,convfno --modes F
	--schedule cpu5k --params "$params" --out "$WORK/text" --data "$WORK/data" --quiet "${small[@]}")
W64=(--task ns2d --model fno --width 64 --steps 5000 --warmup 250 --data "$WORK/data"
	--out "$WORK/text/ns2d/fno-w64" --quiet)
[ "${SMALL:-0}" = 1 ] && W64=(--task ns2d --model fno --width 8 --steps 3 --data "$WORK/data"
	--out "$WORK/text/ns2d/fno-w64" --quiet "${small[@]:0:8}")

log "binary $BIN $($BIN --version 2>&1 | head -1)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$OUT/run.log"
command -v nvidia-smi >/dev/null && { nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 10 >>"$WORK/gpu-util.log" 2>&1 & smi=$!; }

# 1. The data: the generator and seed of the CPU cells (the file's name
# carries its settings' hash; the run's data stamp checks its content).
$BIN datagen --task ns2d --out "$WORK/data" --quiet "${small[@]:0:8}" 2>&1 | tail -2 | tee -a "$OUT/run.log"

# 2. The cells, LANES processes at once, each taking the next unclaimed
# one: the grid's cells by number, then the width-64 control ("w64").
n=$($BIN reproduce "${F[@]}" --slurm "$WORK/cells.sh" | sed -n 's/^reproduce: \([0-9]*\) cells.*/\1/p')
ORDER="$(seq 0 $((n - 1))) w64"
log "$n grid cells and w64, order $(echo $ORDER), $LANES lanes, $(left) s left"
rm -rf "$WORK"/claim.*
pids=()
for ((j = 0; j < LANES; j++)); do
	(for k in $ORDER; do
		mkdir "$WORK/claim.$k" 2>/dev/null || continue
		s=$(date +%s)
		if [ "$k" = w64 ]; then
			if [ -f "$WORK/text/ns2d/fno-w64/latest" ]; then
				$BIN train --resume "$WORK/text/ns2d/fno-w64" --quiet >>"$OUT/lane$j.log" 2>&1
			else
				$BIN train "${W64[@]}" >>"$OUT/lane$j.log" 2>&1
			fi
		else
			$BIN reproduce "${F[@]}" --cell "$k" >>"$OUT/lane$j.log" 2>&1
		fi
		echo "[$(($(date +%s) - t0))s] lane $j cell $k rc $? in $(($(date +%s) - s)) s" >>"$OUT/run.log"
	done) &
	pids+=($!)
done
# The watchdog: SIGINT every training STOP_LEFT s before the deadline (each
# checkpoints and stops at its next step).
while :; do
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ $alive = 0 ] && break
	if [ "$(left)" -le "${STOP_LEFT:-40}" ]; then
		log "deadline: stopping the trainings"
		pkill -INT -f "reproduce.*--cell|train.*fno-w64"; sleep 20; pkill -KILL -f "reproduce.*--cell|train.*fno-w64"
		break
	fi
	sleep 2
done
wait "${pids[@]}"
log "cells over, $(left) s left"

# 3. Evaluation on the card, if time is left: the grid's finish (Tab.
# main-acc's NS-2D column and mode F's ablation beside Full), then the
# control beside Full on the same test trajectories.
if [ "$(left)" -gt "${FINISH_LEFT:-120}" ]; then
	timeout -s INT "$(($(left) - 30))" $BIN reproduce "${F[@]}" --finish >"$OUT/finish.log" 2>&1
	log "finish rc $?"
	if [ -f "$WORK/text/ns2d/fno-w64/latest" ] && [ "$(left)" -gt 40 ]; then
		timeout -s INT "$(($(left) - 20))" $BIN eval --checkpoint "$WORK/text/ns2d/fno-w64,$WORK/text/ns2d/uhno" \
			--data "$WORK/data" --out "$WORK/text/ns2d/eval-w64" --quiet >"$OUT/eval-w64.log" 2>&1
		log "eval w64 rc $?"
	fi
fi

# 4. Pack what comes back: logs, evaluations, reports, each run's state and
# log (no weights, no data).
[ -n "${smi:-}" ] && kill "$smi" 2>/dev/null
cp "$OUT"/lane*.log "$WORK"/ 2>/dev/null
(cd "$WORK" && tar czf "$OUT/text-cells.tgz" --exclude='step-*' --exclude='*.h5' --exclude='*.bin' \
	text cells.sh lane*.log $(ls gpu-util.log 2>/dev/null))
rm -f "$OUT"/lane*.log
ls -la "$OUT" | tee -a "$OUT/run.log"
log "done"
