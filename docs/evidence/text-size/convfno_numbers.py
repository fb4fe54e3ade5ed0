#!/usr/bin/env python3
"""Prints the numbers RESULTS quotes for block 1's Conv-FNO cell: its row
(relL2, relH1, MSE, energy drift, SF with intervals), crashes, training
time and rate, the validation MSE and the dynamics probe's relL2 at each
record, from convfno/eval/results.json and convfno/log.jsonl."""
import json
r = json.load(open("convfno/eval/results.json"))
for m in r["models"]:
    e = m["evaluation"]
    f = lambda k: f"{e['metrics'][k]['mean']:.4g} [{e['metrics'][k]['low']:.4g}, {e['metrics'][k]['high']:.4g}]"
    print(m["label"], m["model"], f"params {m['params']:,}", "step", m["step"])
    print("| " + " | ".join(f(k) for k in ("relL2", "relH1", "mse", "energy_drift", "sf")) + " |")
    print("crash rate", e["crash_rate"])
vals, dyn, last = [], [], None
for line in open("convfno/log.jsonl"):
    try:
        x = json.loads(line)
    except ValueError:
        continue
    if x.get("kind") == "train":
        last = x
    if x.get("kind") == "val":
        vals.append((x["step"], x["mse"]))
    if x.get("kind") == "probe" and x.get("probe") == "dynamics":
        v = x["value"]
        dyn.append((x["step"], v.get("rel_l2", v.get("relL2")), v.get("crashed")))
print("validation MSE:", ", ".join(f"{s}: {v:.3g}" for s, v in vals))
print("dynamics probe relL2:", ", ".join(f"{s}: {v}" for s, v, _ in dyn))
print(f"training: step {last['step']} at {last['elapsed_s']/3600:.2f} h of this leg ({last['step']/last['elapsed_s']:.3f} steps/s if it ran from step 0)")
