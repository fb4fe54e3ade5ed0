#!/bin/bash
# PLAN.md's addendum: FNO at seed 1, then both seed-1 runs evaluated together.
cd /work/evidence/adv2d-diag
B=/work/evidence/bin/uhno-grid
if [ -f runs/fno-seed1/latest ]; then $B train --resume runs/fno-seed1 --threads 1 --quiet >> fno-seed1.log 2>&1 || exit 1
else $B train --task adv2d --model fno --params 0.62M --steps 5000 --warmup 250 --set seed=1 --data /work/evidence/adv2d-diag/data --out runs/fno-seed1 --threads 1 --quiet >> fno-seed1.log 2>&1 || exit 1; fi
$B eval --checkpoint runs/full-seed1,runs/fno-seed1 --data /work/evidence/adv2d-diag/data --rollout 10 --threads 1 --quiet --no-figures --out eval-seed1-both > eval-seed1-both.log 2>&1 || exit 1
echo done > queue2.done
