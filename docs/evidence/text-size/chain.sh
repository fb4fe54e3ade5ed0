#!/bin/bash
# Waits for the Full cell's training to end, then evaluates it (eval_full.sh).
cd /work/evidence/text
while pgrep -f "uhno-text reproduce" >/dev/null; do sleep 10; done
grep -q '"step":5000' runs/ns2d/uhno/log.jsonl && ./eval_full.sh
echo "chain done $(date -u)" >> eval.log
