#!/bin/bash
# Issue 39's CPU evidence, one block after another (each block's PLAN.md
# fixes its runs before they start). Every step resumes from its
# checkpoints and skips what is finished, so a new session reruns this
# script: nohup bash docs/evidence/queue.sh &
D=/work/main/docs/evidence
cd /work/evidence
while pgrep -f 'run_block2_ac2d_modes_seeds.sh|run_fno.sh|eval_fno.sh|run_w64.sh|run_block2_ns2d.sh|run_block3.sh|run_block4.sh|run_text_cells.sh' >/dev/null; do sleep 30; done
echo "queue $(date -u +%FT%TZ)" >> queue.log
# Block 1: NS-2D FNO at the text's size (text-size/PLAN.md), then its evaluation beside Full.
if [ ! -f text/runs/ns2d/eval-text/results.json ]; then
  bash $D/text-size/run_fno.sh || exit 1
  [ -f text/runs/ns2d/eval-text/results.json ] || exit 1
fi
# Block 1's width-64 FNO control and its evaluation beside Full and FNO
# (text-size/PLAN.md, "The width-64 FNO control on the CPU").
bash $D/text-size/run_w64.sh || exit 1
# Block 2's last task: NS-2D at 0.62M, seeds 0-2 (seeds/PLAN.md, "NS-2D").
bash $D/seeds/run_block2_ns2d.sh || exit 1
# Block 3: Burgers-shock at the text's size, seeds 0-2 (text-shock/PLAN.md).
bash $D/text-shock/run_block3.sh || exit 1
# Block 4: AC-2D at the text's size, Full and FNO (text-ac2d/PLAN.md).
bash $D/text-ac2d/run_block4.sh || exit 1
# Block 1's last cells, mode F and Conv-FNO at the text's size, on the CPU
# (text-size/PLAN.md, "Mode F and Conv-FNO on the CPU, the queue's last step").
bash $D/text-size/run_text_cells.sh
