#!/bin/bash
# Issue 39, evidence block 1's last cells on the CPU (PLAN.md, "Mode F and
# Conv-FNO on the CPU, the queue's last step"): Conv-FNO and mode F at the
# text's size, two lanes, then the grid's evaluation and ablation table.
# Rerun to resume; Full's and FNO's finished cells are reused, not retrained.
cd /work/evidence/text
B=/work/evidence/uhno-39d
echo "start $(date -u +%FT%TZ) binary $(cat /work/evidence/uhno-39d.commit)" >> cells.log
$B reproduce --tables main-acc,ablation-extra --tasks ns2d --models uhno,fno,convfno --modes F \
  --schedule cpu5k --params text --parallel 2 --out /work/evidence/text/runs --quiet >> cells.log 2>&1
rc=$?
echo "end $(date -u +%FT%TZ) rc $rc" >> cells.log
exit $rc
