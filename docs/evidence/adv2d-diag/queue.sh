#!/bin/bash
# The two diagnostic runs of PLAN.md, one after the other, resumable
# (rerun: a finished run is reported complete, an interrupted one resumes).
cd /work/evidence/adv2d-diag
B=/work/evidence/bin/uhno-grid
run() { # dir, args...
  d=$1; shift
  if [ -f $d/latest ]; then $B train --resume $d --threads 1 --quiet; else $B train "$@" --out $d --threads 1 --quiet; fi
}
run runs/F-seed0 --task adv2d --mode F --params 0.62M --steps 5000 --warmup 250 --data /work/evidence/grid/data >> F-seed0.log 2>&1 || exit 1
run runs/full-seed1 --task adv2d --params 0.62M --steps 5000 --warmup 250 --set seed=1 --data /work/evidence/adv2d-diag/data >> full-seed1.log 2>&1 || exit 1
echo done > queue.done
