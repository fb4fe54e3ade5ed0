#!/usr/bin/env python3
"""Block 2's RESULTS table for one task from the grid's evaluations:
each seed's relL2 and relH1 (mean [95% interval over test trajectories]),
then the merge over seeds (mean of seed means [bootstrap over seeds and
trajectories], spread). Usage: table.py OUT TASK SEEDS (e.g. /work/evidence/seeds ac2d 0,1,2)."""
import json, os, sys

out, task, seeds = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3].split(',')]

def load(p):
    return json.load(open(p)) if os.path.exists(p) else None

def fmt(m):
    return f"{m['mean']:.4g} [{m['low']:.4g}, {m['high']:.4g}]"

per = {}
for s in seeds:
    d = os.path.join(out, task if s == 0 else f"{task}/seed{s}", "eval", "results.json")
    r = load(d)
    if r is None:
        continue
    for m in r['models']:
        per.setdefault(m['label'], {})[s] = m
merged = load(os.path.join(out, task, "eval-seeds", "results.json"))
head = "| model | parameters | " + " | ".join(f"seed {s}: relL2" for s in seeds) + " | over seeds: relL2 | spread | over seeds: relH1 |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
for label, ms in per.items():
    params = next(iter(ms.values()))['params']
    cells = [fmt(ms[s]['evaluation']['metrics']['relL2']) if s in ms else "-" for s in seeds]
    mm = None
    if merged:
        mm = next((m for m in merged['models'] if m['label'] == label), None)
    if mm:
        e = mm['evaluation']['metrics']
        vals = mm['evaluation'].get('seeds', {}).get('means', {}).get('relL2') or [ms[s]['evaluation']['metrics']['relL2']['mean'] for s in seeds if s in ms]
        spread = max(vals) - min(vals)
        print(f"| {label} | {params:,} | " + " | ".join(cells) + f" | {fmt(e['relL2'])} | {spread:.3g} | {fmt(e['relH1'])} |")
    else:
        print(f"| {label} | {params:,} | " + " | ".join(cells) + " | - | - | - |")
