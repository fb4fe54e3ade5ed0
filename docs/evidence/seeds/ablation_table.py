#!/usr/bin/env python3
"""Block 2's ablation table for one task from the merge over seeds
(<task>/ablate-seeds/ablation.json, eval.MergeAblations): each mode's
relL2 over seeds [bootstrap over seeds and trajectories], per seed, the
factor mode / Full of the over-seeds means and per seed, relH1 over seeds.
Usage: ablation_table.py OUT TASK (e.g. /work/evidence/seeds ns2d)."""
import json, os, sys

out, task = sys.argv[1], sys.argv[2]
a = json.load(open(os.path.join(out, task, "ablate-seeds", "ablation.json")))

def fmt(m):
    return f"{m['mean']:.4g} [{m['low']:.4g}, {m['high']:.4g}]"

full = a["entries"][0]["evaluation"]["seeds"]["means"]["relL2"]
print("| mode | parameters | relL2 over seeds | relL2 per seed (" + ", ".join(str(s) for s in a["entries"][0]["evaluation"]["seeds"]["seeds"]) +
      ") | factor over seeds | factor per seed | relH1 over seeds |")
print("|---|---|---|---|---|---|---|")
for e in a["entries"]:
    ev = e["evaluation"]
    per = ev["seeds"]["means"]["relL2"]
    f = e.get("factor", {}).get("relL2", 1)
    fper = " / ".join(f"{p / q:.2f}" for p, q in zip(per, full))
    print(f"| {e['label']} | {e['params']:,} | {fmt(ev['metrics']['relL2'])} | " + " / ".join(f"{p:.4g}" for p in per) +
          f" | {f:.2f}x | {fper} | {fmt(ev['metrics']['relH1'])} |")
