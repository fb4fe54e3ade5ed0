#!/bin/bash
# Tab. ablation-extra's NS-2D column (Full and modes A-I) on one GPU, in one
# device call: the grid's cells (uhno reproduce --cell K, the same flags as
# the CPU grid's run_grid.sh restricted to --tables ablation-extra --tasks
# ns2d) in LANES processes at once, then --finish (evaluation and report).
# Fixed before any result (PLAN.md beside this file). Run from the repo root:
#   DEADLINE=520 bash docs/evidence/ns2d-ablation-gpu/run.sh
# Env: BIN (default bin/uhno-cuda), LANES (3), ORDER (the cells in the
# order they are taken), DEADLINE (seconds after the
# start at which every training is stopped with SIGINT at its next step and
# the results are packed; rerunning the script resumes), WORK (.gpurun:
# git-ignored, since the device tool re-copies the working tree at every
# call and removes untracked paths that are not ignored),
# OUT (where the packed files go; the device tool's $OUT), SMALL=1 (a
# rehearsal on tiny data: 3 steps, 6 trajectories of 22 frames),
# DIGEST (bin/digest, built from digest/ beside this file), DATA_SHA (the
# digest the data must have: the CPU grid's file's), STOP_LEFT (40: the
# trainings are stopped this many seconds before DEADLINE), FINISH_LEFT (90:
# --finish runs only with more than this left; else the packed checkpoints
# are evaluated elsewhere).
set -u
t0=$(date +%s)
BIN=${BIN:-bin/uhno-cuda}
LANES=${LANES:-3}
DEADLINE=${DEADLINE:-520}
WORK=${WORK:-.gpurun}
OUT=${OUT:-/tmp/gpurun-out}
mkdir -p "$WORK" "$OUT"
log() { echo "[$(($(date +%s) - t0))s] $*" | tee -a "$OUT/run.log"; }
left() { echo $((DEADLINE - ($(date +%s) - t0))); }

small=()
if [ "${SMALL:-0}" = 1 ]; then
	small=(--set data.train_trajectories=4 --set data.test_trajectories=2 --set data.snapshots=22 --set pde.t_end=21)
fi
F=(--tables ablation-extra --tasks ns2d --schedule cpu5k --params 0.62M
	--out "$WORK/abl" --data "$WORK/data" --quiet "${small[@]}")
STEPS=5000
[ "${SMALL:-0}" = 1 ] && STEPS=3 && F+=(--steps 3)

log "binary $BIN $($BIN --version 2>&1 | head -1)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$OUT/run.log"
log "cores $(nproc)"
# GPU utilisation every 10 s (does a lane leave the GPU idle?)
command -v nvidia-smi >/dev/null && { nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 10 >"$WORK/gpu-util.log" 2>&1 & smi=$!; }

# 1. The data: the same generator and seed as the CPU grid's, so the same
# bits (checked against DATA_SHA when given: digest/ hashes the datasets'
# values, not the file's bytes, which hold HDF5's object times).
$BIN datagen --task ns2d --out "$WORK/data" --quiet "${small[@]}" 2>&1 | tail -2 | tee -a "$OUT/run.log"
h5=$(ls "$WORK"/data/ns2d_seed0_*.h5 | head -1)
sha=$(${DIGEST:-bin/digest} "$h5" | cut -d' ' -f1)
log "data $h5 digest $sha"
if [ -n "${DATA_SHA:-}" ] && [ "$sha" != "$DATA_SHA" ]; then
	log "DATA MISMATCH: expected $DATA_SHA"
fi

# 2. The cells, LANES processes at once, each taking the next unclaimed cell
# of ORDER (mode G, the flat stack at full resolution, costs about three
# times a U-shaped run: it goes first).
n=$($BIN reproduce "${F[@]}" --slurm "$WORK/cells.sh" | sed -n 's/^reproduce: \([0-9]*\) cells.*/\1/p')
ORDER=${ORDER:-$(seq 0 $((n - 1)))}
log "$n cells, order $(echo $ORDER), $LANES lanes, $(left) s left"
rm -rf "$WORK"/claim.*
pids=()
for ((j = 0; j < LANES; j++)); do
	(for k in $ORDER; do
		mkdir "$WORK/claim.$k" 2>/dev/null || continue
		s=$(date +%s)
		$BIN reproduce "${F[@]}" --cell "$k" >>"$OUT/lane$j.log" 2>&1
		rc=$?
		echo "[$(($(date +%s) - t0))s] lane $j cell $k rc $rc in $(($(date +%s) - s)) s" >>"$OUT/run.log"
	done) &
	pids+=($!)
done
# The watchdog: SIGINT every training STOP_LEFT (40) s before the deadline
# (each checkpoints and stops at its next step), keeping time for packing.
while :; do
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ $alive = 0 ] && break
	if [ "$(left)" -le "${STOP_LEFT:-40}" ]; then
		log "deadline: stopping the trainings"
		pkill -INT -f "reproduce.*--cell" ; sleep 20; pkill -KILL -f "reproduce.*--cell"
		break
	fi
	sleep 2
done
wait "${pids[@]}" # not a bare wait: the nvidia-smi sampler never ends
log "cells over, $(left) s left"

# 3. Evaluation and report, if time is left (else it is done from the
# weights on another machine: reproduce --finish reads weights and state).
if [ "$(left)" -gt "${FINISH_LEFT:-90}" ]; then
	timeout -s INT "$(($(left) - 10))" $BIN reproduce "${F[@]}" --finish >"$OUT/finish.log" 2>&1
	log "finish rc $?"
fi

# 4. Pack: logs, evaluations and the report (no checkpoints) in one file;
# every run's latest checkpoint whole (weights, AdamW moments, state,
# manifest: evaluation reads them all, and an unfinished run resumes from
# it) two runs to a file (about 3.5 MB a run compressed; the device tool
# returns at most 8 files of 16 MiB).
[ -n "${smi:-}" ] && kill "$smi" 2>/dev/null
cp "$OUT"/lane*.log "$OUT"/finish.log "$WORK"/ 2>/dev/null
(cd "$WORK" && tar czf "$OUT/abl-logs.tgz" --exclude='step-*' --exclude='*.h5' abl cells.sh lane*.log $(ls finish.log gpu-util.log 2>/dev/null))
rm -f "$OUT"/lane*.log "$OUT"/finish.log
ck=()
for d in "$WORK"/abl/ns2d/uhno "$WORK"/abl/ns2d/ablate/[A-I]; do
	[ -f "$d/latest" ] || continue
	c=$(cat "$d/latest")
	grep -q "\"step\": *$STEPS[,}]" "$d/$c/state.json" || log "unfinished: $d ($c)"
	ck+=("${d#$WORK/}/latest" "${d#$WORK/}/$c")
done
for ((i = 0; i < ${#ck[@]}; i += 4)); do
	(cd "$WORK" && tar czf "$OUT/ckpt$((i / 4 + 1)).tgz" "${ck[@]:i:4}")
done
ls -la "$OUT" | tee -a "$OUT/run.log"
log "done"
