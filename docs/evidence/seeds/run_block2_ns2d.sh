#!/bin/bash
# Issue 39 evidence block 2, NS-2D (docs/evidence/seeds/PLAN.md, "NS-2D"): rerun to resume.
cd /work/evidence
B=./uhno-39c
C="--schedule cpu5k --params 0.62M --parallel 2 --out /work/evidence/seeds --data /work/evidence/data --quiet"
echo "start $(date -u +%FT%TZ) binary $(cat uhno-39c.commit)" >> block2-ns2d.log
$B reproduce --tables main-acc --tasks ns2d --models uhno,fno --seeds 0,1,2 $C >> block2-ns2d.log 2>&1 || { rc=$?; echo "end $(date -u +%FT%TZ) rc $rc (Full and FNO)" >> block2-ns2d.log; exit 1; }
$B reproduce --tables main-acc,ablation-extra --tasks ns2d --models uhno,fno --modes A,F --seeds 0,1,2 $C >> block2-ns2d.log 2>&1
rc=$?
echo "end $(date -u +%FT%TZ) rc $rc" >> block2-ns2d.log
exit $rc
