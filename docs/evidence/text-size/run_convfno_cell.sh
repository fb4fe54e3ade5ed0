#!/bin/bash
# Issue 39, block 1's Conv-FNO at the text's size, one session (PLAN.md,
# "Mode F and Conv-FNO, one run a session"). Rerun to resume within a session.
cd /work/evidence
echo "start $(date -u +%FT%TZ) binary $(cat uhno-39d.commit) host $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" >> convfno-cell.log
./uhno-39d reproduce --tables main-acc --tasks ns2d --models convfno --schedule cpu5k --params text \
    --out /work/evidence/text-ns2d-convfno --data /work/evidence/data --quiet >> convfno-cell.log 2>&1
rc=$?
echo "end $(date -u +%FT%TZ) rc $rc" >> convfno-cell.log
sha256sum data/ns2d_seed0_n1000_5453287c84.h5 >> convfno-cell.log
exit $rc
