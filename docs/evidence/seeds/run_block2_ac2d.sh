#!/bin/bash
# Issue 39 evidence block 2, AC-2D (docs/evidence/seeds/PLAN.md): written before the run.
# 23:45 UTC: cut to Full and FNO (PLAN.md, "Cut at 23:45").
cd /work/evidence
echo "start $(date -u +%FT%TZ) binary $(git -C /work/main rev-parse --short HEAD)" >> block2-ac2d.log
./uhno reproduce --tables main-acc --tasks ac2d --models uhno,fno \
    --seeds 0,1,2 --schedule cpu5k --params 0.62M --parallel 2 \
    --out /work/evidence/seeds --data /work/evidence/data --quiet >> block2-ac2d.log 2>&1
echo "end $(date -u +%FT%TZ) rc $?" >> block2-ac2d.log
