#!/bin/bash
# Issue 22's evidence grid: every table, seven self-generated tasks, eight
# models and Tab. ablation-extra's modes, --params 0.62M, schedule cpu5k
# (fixed before any result: docs/DECISIONS.md, D-reproduce-cpu5k).
# --parallel 2 since 2026-11-27 05:12 UTC: two 1-thread copies of one model give 1.1-1.6x the
# throughput of one 2-thread training (docs/PERFORMANCE.md); the bits do not depend on threads.
# Resumable: rerun this script; finished runs are skipped.
# TASKS (default all) restricts the grid to some tasks; since 2026-11-27 08:25 UTC
# the session runs ac2d and darcy before ns2d (ns2d's 17 runs would not fit in one
# session). The grid's cells and settings do not depend on the order.
# TABLES (default all) restricts the tables; since 2026-11-27 11:45 UTC NS-2D's
# main-acc cells run here while Tab. ablation-extra's run on a lent GPU
# (docs/evidence/ns2d-ablation-gpu/PLAN.md).
# BIN (default the grid's binary, 9804f3d) and PARALLEL (2): since 2026-11-27 11:55
# UTC the Darcy column runs with data.coordinates (D-coordinate-channels), which
# needs a later binary (45bdc03) beside the NS-2D process, one run at a time; its
# first runs, without the channels, are kept in archive/darcy-nocoords.
# Since 2026-11-27 14:10 UTC (no GPU this session) NS-2D runs with
# TABLES=main-acc,main-acc-h1,stability,spectral,ablation-extra: modes A-I follow U-HNO in the
# same process, on the CPU, under the same schedule.
cd /work/evidence/grid
exec "${BIN:-/work/evidence/bin/uhno-grid}" reproduce --tables "${TABLES:-all}" --tasks "${TASKS:-all}" --schedule cpu5k --params 0.62M --parallel "${PARALLEL:-2}" \
  --out /work/evidence/grid/runs --data /work/evidence/grid/data >> "${LOG:-grid.log}" 2>&1
