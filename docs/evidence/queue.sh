#!/bin/bash
# Issue 39's CPU evidence still to run, one session's run at a time.
# Machines are not known to outlive a session (the one of 2026-11-28
# 22:49 UTC was new: text-ac2d/PLAN.md, "A new machine"), so every step
# here starts, finishes and is evaluated inside one session, and each
# finished step's results are committed under docs/evidence/ before the
# session ends. Run it at a session's start: it runs the first step whose
# results are not committed yet, and nothing after it.
#   cd /work/main && nohup bash docs/evidence/queue.sh >/dev/null 2>&1 &
# Block 4's finished run goes into git by text-ac2d/collect.sh MODEL (it
# reproduces the committed uhno/ files byte for byte); block 1's cells by
# text-size/collect.sh convfno|F.
D=/work/main/docs/evidence
mkdir -p /work/evidence
echo "queue $(date -u +%FT%TZ)" >> /work/evidence/queue.log
# Every step runs uhno-39d (607f95a), built here when missing.
if [ ! -x /work/evidence/uhno-39d ]; then
  git -C /work/main worktree add -f /tmp/w39d 607f95a >/dev/null 2>&1 &&
    (cd /tmp/w39d && go build -ldflags "-X main.version=607f95a" -o /work/evidence/uhno-39d ./cmd/uhno) &&
    echo 607f95a > /work/evidence/uhno-39d.commit
  git -C /work/main worktree remove --force /tmp/w39d
fi
for m in uhno fno; do
  [ -f $D/text-ac2d/$m/eval/results.json ] || exec bash $D/text-ac2d/run_block4.sh $m
done
# Block 1's last cells (text-size/PLAN.md, "Mode F and Conv-FNO, one run
# a session" and "Mode F first; Conv-FNO where it fits"): mode F, then
# Conv-FNO, which runs only with QUEUE_CONVFNO=1, set by hand after its dry
# run shows it fits the session (about 2.9 h on the 2-vCPU Intel machine:
# it does not); their results are committed as text-size/F/ and
# text-size/convfno/.
[ -f $D/text-size/F/eval/results.json ] || exec bash $D/text-size/run_F_cell.sh
if [ ! -f $D/text-size/convfno/eval/results.json ]; then
  # Started by hand (QUEUE_CONVFNO=1) once mode F is committed; resumed by
  # the queue in the next session when its run directory is still here
  # (PLAN.md, "Conv-FNO across two sessions where the machine persists").
  [ "${QUEUE_CONVFNO:-0}" = 1 ] && exec bash $D/text-size/run_convfno_cell.sh
  [ -d /work/evidence/text-ns2d-convfno ] && exec bash $D/text-size/run_convfno_cell.sh
  echo "queue: Conv-FNO left for a machine where it fits (QUEUE_CONVFNO=1)" >> /work/evidence/queue.log
  exit 0
fi
echo "queue: nothing left" >> /work/evidence/queue.log
