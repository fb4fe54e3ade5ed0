#!/bin/bash
# Issue 39's CPU evidence still to run, one session's run at a time.
# Machines are not known to outlive a session (the one of 2026-11-28
# 22:49 UTC was new: text-ac2d/PLAN.md, "A new machine"), so every step
# here starts, finishes and is evaluated inside one session, and each
# finished step's results are committed under docs/evidence/ before the
# session ends. Run it at a session's start: it runs the first step whose
# results are not committed yet, and nothing after it.
#   cd /work/main && nohup bash docs/evidence/queue.sh >/dev/null 2>&1 &
D=/work/main/docs/evidence
mkdir -p /work/evidence
echo "queue $(date -u +%FT%TZ)" >> /work/evidence/queue.log
# Block 4 (text-ac2d/PLAN.md): AC-2D at the text's size, Full then FNO,
# one a session (uhno-39d, built at 607f95a).
for m in uhno fno; do
  if [ ! -f $D/text-ac2d/$m/eval/results.json ]; then
    if [ ! -x /work/evidence/uhno-39d ]; then
      git -C /work/main worktree add -f /tmp/w39d 607f95a >/dev/null 2>&1 &&
        (cd /tmp/w39d && go build -ldflags "-X main.version=607f95a" -o /work/evidence/uhno-39d ./cmd/uhno) &&
        echo 607f95a > /work/evidence/uhno-39d.commit
      git -C /work/main worktree remove --force /tmp/w39d
    fi
    exec bash $D/text-ac2d/run_block4.sh $m
  fi
done
echo "queue: block 4 is done; block 1's mode F and Conv-FNO need their one-run-a-session plan (text-size/PLAN.md)" >> /work/evidence/queue.log
