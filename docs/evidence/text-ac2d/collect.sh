#!/bin/bash
# Copies one finished block-4 run's results from /work/evidence into
# docs/evidence/text-ac2d/MODEL/ for git (a 64M checkpoint does not go in
# git, so this is what outlives the machine): the evaluation's results.json
# (with per-trajectory values, what compare.py reads) and results.md, the
# error-growth and loss figures (and U-HNO's routing masks), the training
# log, the grid's report, and the run's part of block4-ac2d.log.
set -euo pipefail
M=${1:?usage: collect.sh uhno|fno}
S=/work/evidence/text-ac2d-$M
D=$(dirname "$0")/$M
mkdir -p "$D/eval/figures"
cp "$S/ac2d/eval/results.json" "$S/ac2d/eval/results.md" "$D/eval/"
for f in error_growth.png dynamics-loss.png "${M}__64.27M__routing.png"; do
  [ -f "$S/ac2d/eval/figures/$f" ] && cp "$S/ac2d/eval/figures/$f" "$D/eval/figures/"
done
cp "$S/ac2d/$M/log.jsonl" "$D/log.jsonl"
cp "$S/report/report.md" "$D/report.md"
# This model's parts of the log: from each of its start lines to the next
# start line of another model.
awk -v m="model $M " 'index($0, "start ") == 1 { on = index($0, m) > 0 } on' \
  /work/evidence/block4-ac2d.log > "$(dirname "$0")/block4-ac2d-$M.log"
ls -la "$D" "$D/eval" "$D/eval/figures"
