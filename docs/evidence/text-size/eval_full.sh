#!/bin/bash
# Issue 39, evidence block 1: the evaluation of cell 2 (ns2d/uhno at --params text, cpu5k, seed 0),
# as the grid evaluates (all 200 test trajectories, 10-step rollout, B = 10,000, bootstrap seed 0),
# by a binary with the pooled band errors. Run when the cell's log says step 5000.
cd /work/evidence/text
exec ./uhno-eval eval --checkpoint runs/ns2d/uhno --out runs/ns2d/eval-uhno --quiet >> eval.log 2>&1
