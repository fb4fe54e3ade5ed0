#!/bin/bash
# Issue 39 evidence block 4 (docs/evidence/text-ac2d/PLAN.md): rerun to resume.
cd /work/evidence
echo "start $(date -u +%FT%TZ) binary $(cat uhno-39d.commit)" >> block4-ac2d.log
./uhno-39d reproduce --tables main-acc --tasks ac2d --models uhno,fno --schedule cpu5k --params text \
    --out /work/evidence/text-ac2d --data /work/evidence/data --quiet >> block4-ac2d.log 2>&1
rc=$?
echo "end $(date -u +%FT%TZ) rc $rc" >> block4-ac2d.log
exit $rc
