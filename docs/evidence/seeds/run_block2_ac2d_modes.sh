#!/bin/bash
# Issue 39 evidence block 2, AC-2D modes A and F at seed 0
# (docs/evidence/seeds/PLAN.md, "AC-2D modes A and F, seed 0"): written before the run.
cd /work/evidence
echo "start $(date -u +%FT%TZ) binary $(git -C /work/main rev-parse --short HEAD)" >> block2-ac2d-modes.log
./uhno reproduce --tables ablation-extra --tasks ac2d --models uhno --modes A,F \
    --seeds 0 --schedule cpu5k --params 0.62M --parallel 2 \
    --out /work/evidence/seeds --data /work/evidence/data --quiet >> block2-ac2d-modes.log 2>&1
echo "end $(date -u +%FT%TZ) rc $?" >> block2-ac2d-modes.log
