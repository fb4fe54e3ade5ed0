#!/bin/bash
# 2026-11-27 14:15 UTC: Darcy's U-HNO cell is trained before F-FNO, Conv-FNO
# and LogLo-FNO (the grid's order puts it last; the session may not reach
# it). When darcy/wno is done this stops the Darcy process (SIGINT: a
# checkpoint), trains cell 7 of the Darcy grid (darcy/uhno) with --cell,
# then restarts the Darcy process for the rest. The cells do not depend on
# the order; --cell trains exactly the cell a plain run would.
cd /work/evidence/grid
BIN=/work/evidence/bin/uhno-grid-45bdc03
until grep -q "darcy/ffno: training into\|darcy/ffno (about" darcy.log; do sleep 20; done
pkill -INT -f "uhno-grid-45bdc03 reproduce --tables main-acc,main-acc-h1,stability,spectral --tasks darcy"
while pgrep -f "uhno-grid-45bdc03 reproduce --tables main-acc,main-acc-h1,stability,spectral --tasks darcy" >/dev/null; do sleep 2; done
echo "darcy_uhno_first.sh: training cell 7 (darcy/uhno) first, $(date -u)" >> darcy.log
nice -n 10 "$BIN" reproduce --tables main-acc,main-acc-h1,stability,spectral --tasks darcy --schedule cpu5k --params 0.62M \
  --cell 7 --out /work/evidence/grid/runs --data /work/evidence/grid/data >> darcy.log 2>&1 || exit 1
BIN=$BIN PARALLEL=1 LOG=darcy.log TABLES=main-acc,main-acc-h1,stability,spectral TASKS=darcy exec /work/evidence/grid/run_grid.sh
