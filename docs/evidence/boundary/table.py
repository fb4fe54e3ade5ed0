#!/usr/bin/env python3
"""Issue 36's boundary measurement: one row per run (PLAN.md), from each
run's eval/results.json. Usage: table.py RUNS_DIR"""
import json, sys, glob, os

rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*", "eval", "results.json"))):
    name = f.split(os.sep)[-3]
    opt, model, seed = name.split("-")
    e = json.load(open(f))["models"][0]
    ev = e["evaluation"]
    m, c = ev["metrics"]["relL2"], ev["curves"]["relL2"]
    rows.append((model, seed, opt, e["params"], m, c["mean"][0], c["mean"][-1]))
print("| model | seed | option | parameters | rollout relL2 [95%] | step 1 | step 25 |")
print("|---|---|---|---|---|---|---|")
for model, seed, opt, p, m, s1, s25 in sorted(rows):
    print(f"| {model} | {seed[1:]} | {opt} | {p:,} | {m['mean']:.4f} [{m['low']:.4f}, {m['high']:.4f}] | {s1:.4f} | {s25:.4f} |")
by = {(r[0], r[1], r[2]): r[4]["mean"] for r in rows}
print()
print("| model | seed | C / N (rollout relL2) |")
print("|---|---|---|")
for model, seed in sorted({(r[0], r[1]) for r in rows}):
    print(f"| {model} | {seed[1:]} | {by[(model, seed, 'C')] / by[(model, seed, 'N')]:.3f} |")
