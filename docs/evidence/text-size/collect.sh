#!/bin/bash
# Copies block 1's finished Conv-FNO or mode-F cell (PLAN.md, "Mode F and
# Conv-FNO, one run a session") from /work/evidence into
# docs/evidence/text-size/CELL/ for git, as text-ac2d/collect.sh does for
# block 4: the evaluation's results.json (per-trajectory values, what
# compare.py reads) and results.md, the error-growth and loss figures, the
# training log, the grid's report (Conv-FNO) and the cell's log.
# queue.sh counts a cell as done when CELL/eval/results.json is committed.
set -euo pipefail
C=${1:?usage: collect.sh convfno|F}
case $C in
convfno) E=/work/evidence/text-ns2d-convfno/ns2d/eval; L=/work/evidence/text-ns2d-convfno/ns2d/convfno/log.jsonl
  R=/work/evidence/text-ns2d-convfno/report/report.md ;;
F) E=/work/evidence/text-ns2d-F-eval; L=/work/evidence/text-ns2d-F/log.jsonl; R= ;;
*) echo "collect.sh: cell $C, want convfno or F" >&2; exit 2 ;;
esac
D=$(dirname "$0")/$C
mkdir -p "$D/eval/figures"
cp "$E/results.json" "$E/results.md" "$D/eval/"
for f in error_growth.png dynamics-loss.png; do
  [ -f "$E/figures/$f" ] && cp "$E/figures/$f" "$D/eval/figures/"
done
cp "$L" "$D/log.jsonl"
[ -n "$R" ] && cp "$R" "$D/report.md"
cp "/work/evidence/$C-cell.log" "$D/$C-cell.log"
ls -la "$D" "$D/eval" "$D/eval/figures"
