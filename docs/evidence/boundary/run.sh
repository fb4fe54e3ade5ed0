#!/bin/bash
# Issue 36's boundary measurement (docs/evidence/boundary/PLAN.md): written before the run.
set -u
cd /work/evidence/boundary
BIN=${BIN:-../uhno-b}
echo "start $(date -u +%FT%TZ) binary $(git -C /work/main rev-parse --short HEAD)" >> run.log
for seed in 0 1; do
  for model in fno uhno; do
    for opt in N C; do
      run=runs/$opt-$model-s$seed
      set_c=""
      [ $opt = C ] && set_c="--set data.coordinates=true"
      $BIN train --data task --model $model --params 0.62M --steps 1500 --warmup 75 --set seed=$seed \
          --threads 1 --out $run --quiet $set_c >> run.log 2>&1 || echo "train $run rc $?" >> run.log
      $BIN eval --checkpoint $run --out $run/eval --no-figures --threads 1 --quiet >> run.log 2>&1 || echo "eval $run rc $?" >> run.log
      echo "done $run $(date -u +%FT%TZ)" >> run.log
    done
  done
done
echo "end $(date -u +%FT%TZ)" >> run.log
