#!/bin/bash
# Issue 39, evidence block 1: Full and FNO at --params text evaluated side by side
# (PLAN.md, "FNO at the text's size on the CPU"): all 200 test trajectories,
# 10-step rollout, B = 10,000, bootstrap seed 0, by the binary that evaluated Full.
cd /work/evidence/text
./uhno-eval eval --checkpoint runs/ns2d/uhno --checkpoint runs/ns2d/fno --out runs/ns2d/eval-text --quiet >> eval-text.log 2>&1
echo "eval end $(date -u +%FT%TZ) rc $?" >> eval-text.log
