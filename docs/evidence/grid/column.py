#!/usr/bin/env python3
"""column.py TASK: the RESULTS table of one task column of the cpu5k grid:
ours (results.json, 1x) beside the paper's (parsed from the grid's report.md
tables Tab. main-acc and main-acc-h1), ranked by our relL2."""
import json, re, sys
task = sys.argv[1]
root = "/work/evidence/grid/runs"
res = json.load(open(f"{root}/{task}/eval/results.json"))
md = open(f"{root}/report/report.md").read()

def paper(item):
    # rows of "### Tab. <item>, <title> (...)" sections whose Source names this task's eval
    out = {}
    for sec in md.split("### ")[1:]:
        head = sec.split("\n", 1)[0]
        if not head.startswith(item + ",") or f"/{task}/eval/results.json" not in sec:
            continue
        for line in sec.split("\n"):
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) >= 4 and c[0] and c[0] not in ("model (ours)",) and not c[0].startswith("---"):
                out[c[1]] = c[3]
    return out

p2, p1 = paper("Tab. main-acc"), paper("Tab. main-acc-h1")
names = {"uhno": "U-HNO", "fno": "FNO", "gno": "GNO", "cno": "CNO", "wno": "WNO", "ffno": "F-FNO", "convfno": "Conv-FNO", "loglofno": "LogLo-FNO"}
rows = []
fnos = [m["params"] for m in res["models"] if m["label"].startswith("fno ")]
for m in res["models"]:
    mt = m["evaluation"]["metrics"]
    key = m["label"].split(" ")[0]
    if key == "fno" and m["params"] >= 2.5 * min(fnos):
        key = "FNO-wider"
    prow = {"ffno": "FFNO"}.get(key, names.get(key, key))
    cr = m["evaluation"].get("crash_rate") or {"mean": 0, "n": 0}
    note = ""
    if cr["mean"] == 1:
        note = "crashed"
    elif cr["mean"] > 0:
        note = " (%d of %d trajectories; %.0f%% crashed)" % (round((1 - cr["mean"]) * cr["n"]), cr["n"], 100 * cr["mean"])
    rows.append((mt["relL2"]["mean"] if mt["relL2"]["mean"] is not None else float("inf"), names.get(key, key), m["params"], mt["relL2"], mt["relH1"], p2.get(prow, "-"), p1.get(prow, "-"), note))
rows.sort(key=lambda r: r[0])
f = lambda x: "%.4g" % x
iv = lambda d: "%s [%s, %s]" % (f(d["mean"]), f(d["low"]), f(d["high"])) if d["mean"] is not None else "crashed on every trajectory"
print("| rank | model | parameters | relL2 ↓ | paper | relH1 ↓ | paper |")
print("|---|---|---|---|---|---|---|")
for i, r in enumerate(rows):
    n = r[7] if r[7] != "crashed" else ""
    print(f"| {i+1} | {r[1]} | {r[2]:,} | {iv(r[3])}{n} | {r[5]} | {iv(r[4])}{n} | {r[6]} |")
print(f"\n{res['test_trajectories']} test trajectories, {res['rollout_steps']}-step rollout, data {res['data']}")
