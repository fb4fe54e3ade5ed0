#!/bin/bash
# Issue 39 evidence block 2, Burgers-shock (docs/evidence/seeds/PLAN.md): written before the run.
cd /work/evidence
echo "start $(date -u +%FT%TZ) binary $(git -C /work/main rev-parse --short HEAD)" >> block2-shock.log
./uhno reproduce --tables main-acc --tasks burgers-shock --models uhno,fno \
    --seeds 0,1,2 --schedule cpu5k --params 0.62M --parallel 2 \
    --out /work/evidence/seeds --data /work/evidence/data --quiet >> block2-shock.log 2>&1
echo "main end $(date -u +%FT%TZ) rc $?" >> block2-shock.log
./uhno reproduce --tables main-acc,ablation-extra --tasks burgers-shock \
    --models uhno,fno --modes A,F --seeds 0,1,2 --schedule cpu5k \
    --params 0.62M --parallel 2 --out /work/evidence/seeds --data /work/evidence/data --quiet >> block2-shock.log 2>&1
echo "end $(date -u +%FT%TZ) rc $?" >> block2-shock.log
