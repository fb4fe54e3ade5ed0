#!/bin/bash
# Issue 39, block 1's Conv-FNO cell once run_convfno_cell.sh has ended
# with rc 0: copies it into convfno/ (collect.sh) and reads it against
# eval-text's Full and FNO and F's run (compare.py, paired over the 200
# test trajectories), saving the reading as convfno/compare.txt.
set -euo pipefail
cd "$(dirname "$0")"
grep -q '^end .* rc 0$' /work/evidence/convfno-cell.log || { echo "finish_convfno.sh: the cell has not ended with rc 0 (convfno-cell.log)" >&2; exit 1; }
bash collect.sh convfno
{
  echo '$ python3 compare.py eval-text/results.json F/eval/results.json convfno/eval/results.json'
  python3 compare.py eval-text/results.json F/eval/results.json convfno/eval/results.json
  echo
  echo '$ python3 compare.py eval-text/results.json F/eval/results.json convfno/eval/results.json mse energy_drift sf'
  python3 compare.py eval-text/results.json F/eval/results.json convfno/eval/results.json mse energy_drift sf
} > convfno/compare.txt
cat convfno/compare.txt
