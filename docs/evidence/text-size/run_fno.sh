#!/bin/bash
# Issue 39, evidence block 1, cell 0 (ns2d/fno at --params text), as PLAN.md fixes it
# ("FNO at the text's size on the CPU, resumed across sessions"). Rerun to resume.
cd /work/evidence/text
while pgrep -f run_block2_ac2d_modes_seeds.sh >/dev/null; do sleep 20; done
echo "start $(date -u +%FT%TZ)" >> fno.log
./uhno-text reproduce --tables main-acc --tasks ns2d --models uhno,fno,convfno --schedule cpu5k --params text \
  --out /work/evidence/text/runs --cell 0 --quiet >> fno.log 2>&1
rc=$?
echo "end $(date -u +%FT%TZ) rc $rc" >> fno.log
grep -q '"step":5000' runs/ns2d/fno/log.jsonl && exec /work/main/docs/evidence/text-size/eval_fno.sh
