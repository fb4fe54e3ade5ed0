#!/bin/bash
# Issue 39 evidence block 3 (docs/evidence/text-shock/PLAN.md): rerun to resume.
cd /work/evidence
B=./uhno-39c
C="--schedule cpu5k --params text --parallel 2 --out /work/evidence/text-shock --data /work/evidence/data --quiet"
echo "start $(date -u +%FT%TZ) binary $(cat uhno-39c.commit)" >> block3-shock.log
$B reproduce --tables main-acc,ablation-extra --tasks burgers-shock --models uhno,fno,convfno --modes F --seeds 0 $C >> block3-shock.log 2>&1 || { rc=$?; echo "end $(date -u +%FT%TZ) rc $rc (seed 0)" >> block3-shock.log; exit 1; }
$B reproduce --tables main-acc,ablation-extra --tasks burgers-shock --models uhno,fno --modes F --seeds 0,1,2 $C >> block3-shock.log 2>&1
rc=$?
echo "end $(date -u +%FT%TZ) rc $rc" >> block3-shock.log
exit $rc
