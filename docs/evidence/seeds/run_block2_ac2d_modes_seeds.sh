#!/bin/bash
# Issue 39 evidence block 2, AC-2D modes A and F at seeds 1 and 2 after seed 0
# (docs/evidence/seeds/PLAN.md, "Then seeds 1 and 2"): written before the run.
cd /work/evidence
while ! grep -q '^end ' block2-ac2d-modes.log; do sleep 20; done
echo "start $(date -u +%FT%TZ) binary $(git -C /work/main rev-parse --short HEAD) (./uhno built at $(cat uhno.commit 2>/dev/null))" >> block2-ac2d-modes-seeds.log
./uhno reproduce --tables ablation-extra --tasks ac2d --models uhno --modes A,F \
    --seeds 0,1,2 --schedule cpu5k --params 0.62M --parallel 2 \
    --out /work/evidence/seeds --data /work/evidence/data --quiet >> block2-ac2d-modes-seeds.log 2>&1
echo "end $(date -u +%FT%TZ) rc $?" >> block2-ac2d-modes-seeds.log
