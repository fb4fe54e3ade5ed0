#!/bin/bash
# Issue 39, evidence block 1: the width-64 FNO control (PLAN.md, "The width-64
# FNO control on the CPU"), then Full, FNO and the control evaluated side by
# side. Rerun to resume; a finished step is skipped.
cd /work/evidence/text
B=/work/evidence/uhno-39c
echo "start $(date -u +%FT%TZ) binary $(cat /work/evidence/uhno-39c.commit)" >> w64.log
if ! grep -q '"step":5000' runs/ns2d/fno-w64/log.jsonl 2>/dev/null; then
  if [ -d runs/ns2d/fno-w64 ]; then
    $B train --resume runs/ns2d/fno-w64 --quiet >> w64.log 2>&1
  else
    $B train --task ns2d --model fno --width 64 --steps 5000 --warmup 250 \
      --out runs/ns2d/fno-w64 --quiet >> w64.log 2>&1
  fi
  rc=$?
  echo "train end $(date -u +%FT%TZ) rc $rc" >> w64.log
  [ $rc = 0 ] || exit 1
fi
if [ ! -f runs/ns2d/eval-control/results.json ]; then
  $B eval --checkpoint runs/ns2d/uhno --checkpoint runs/ns2d/fno --checkpoint runs/ns2d/fno-w64 \
    --out runs/ns2d/eval-control --quiet >> w64.log 2>&1
  rc=$?
  echo "eval end $(date -u +%FT%TZ) rc $rc" >> w64.log
  exit $rc
fi
