#!/bin/bash
# Issue 39, evidence block 1, cell 2 (ns2d/uhno, Full at --params text), as PLAN.md fixes it.
cd /work/evidence/text
exec ./uhno-text reproduce --tables main-acc --tasks ns2d --models uhno,fno,convfno --schedule cpu5k --params text \
  --out /work/evidence/text/runs --cell 2 --quiet >> full.log 2>&1
