#!/bin/bash
# Issue 39 evidence block 4 (docs/evidence/text-ac2d/PLAN.md): one model per
# session (PLAN.md, "A new machine"): run_block4.sh uhno, then run_block4.sh fno.
# Rerun to resume within a session.
M=${1:?usage: run_block4.sh uhno|fno}
cd /work/evidence
echo "start $(date -u +%FT%TZ) model $M binary $(cat uhno-39d.commit) host $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" >> block4-ac2d.log
./uhno-39d reproduce --tables main-acc --tasks ac2d --models $M --schedule cpu5k --params text \
    --out /work/evidence/text-ac2d-$M --data /work/evidence/data --quiet >> block4-ac2d.log 2>&1
rc=$?
echo "end $(date -u +%FT%TZ) rc $rc" >> block4-ac2d.log
sha256sum data/ac2d_seed0_n1000_19d129c93c.h5 >> block4-ac2d.log
exit $rc
