#!/bin/bash
# Issue 39, block 1's mode F at the text's size, one session (PLAN.md,
# "Mode F and Conv-FNO, one run a session"): trained alone as the grid
# configures it, then evaluated with the grid's settings. Rerun to resume.
cd /work/evidence
echo "start $(date -u +%FT%TZ) binary $(cat uhno-39d.commit) host $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" >> F-cell.log
R=/work/evidence/text-ns2d-F
if [ -f $R/latest ]; then
  ./uhno-39d train --resume $R --quiet >> F-cell.log 2>&1
else
  ./uhno-39d train --task ns2d --params text --mode F --steps 5000 --warmup 250 \
      --data /work/evidence/data --out $R --quiet >> F-cell.log 2>&1
fi
rc=$?
[ $rc -eq 0 ] && { ./uhno-39d eval --checkpoint $R --data /work/evidence/data --out $R-eval --quiet >> F-cell.log 2>&1; rc=$?; }
echo "end $(date -u +%FT%TZ) rc $rc" >> F-cell.log
sha256sum data/ns2d_seed0_n1000_5453287c84.h5 >> F-cell.log
exit $rc
