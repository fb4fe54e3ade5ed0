#!/bin/bash
# 2026-11-27: the grid's NS-2D process trains the models and then Tab.
# ablation-extra's modes in one process (binary 9804f3d), whose interim
# evaluation waits for the modes (fixed in a later commit). This evaluates
# and reports NS-2D's models as soon as the last of them is trained, with
# the options the grid's finish uses (so the finish skips them as current).
cd /work/evidence/grid
until grep -q "ns2d/convfno: step 5000/5000:" grid.log && grep -q "ns2d/uhno: step 5000/5000:" grid.log; do sleep 30; done
sleep 30 # the last checkpoint and the run's final record
nice -n 10 /work/evidence/bin/uhno-grid reproduce --tables main-acc,main-acc-h1,stability,spectral --tasks ns2d --schedule cpu5k \
  --params 0.62M --out /work/evidence/grid/runs --data /work/evidence/grid/data --finish --threads 1 >> ns2d-finish.log 2>&1
echo "ns2d_models_finish.sh: exit $? $(date -u)" >> ns2d-finish.log
