#!/usr/bin/env python3
"""Side-by-side reading of one uhno evaluation (results.json): each model's
relL2 and relH1 with the evaluation's own intervals, and for every pair the
ratio of their means with a paired 95% percentile bootstrap over the test
trajectories (B = 10,000, Python's random.Random(0); each resample draws one set of
trajectory indices for both models, since both are scored on the same
trajectories). Usage: compare.py results.json [results.json ...] [metric ...]

Several results.json files (evaluations of one model each, made apart, as
block 4's one run per session) are read as one evaluation when they agree
on task, data file name, test trajectories, rollout and horizon; the data
file's identity beyond its name is the caller's to check (block 4's log
records its sha256)."""
import json, os, random, sys

files = [a for a in sys.argv[1:] if a.endswith(".json")]
metrics = [a for a in sys.argv[1:] if not a.endswith(".json")] or ["relL2", "relH1"]
r = json.load(open(files[0]))
ms = list(r["models"])
for f in files[1:]:
    o = json.load(open(f))
    for k in ("task", "data", "test_trajectories", "rollout_steps", "horizon_mult"):
        a, b = o.get(k), r.get(k)
        if k == "data":  # the file's name (its settings' fingerprint), not where a machine keeps it
            a, b = os.path.basename(a or ""), os.path.basename(b or "")
        if a != b:
            sys.exit(f"compare.py: {f}: {k} is {o.get(k)!r}, {files[0]} has {r.get(k)!r}")
    ms += o["models"]
print(f"task {r['task']}, {r['test_trajectories']} test trajectories, rollout {r['rollout_steps']}, uhno {r['uhno_version']}")
for m in ms:
    e = m["evaluation"]["metrics"]
    print(f"{m['label']:24s} step {m['step']:5d} params {m['params']:,}: " +
          "; ".join(f"{k} {e[k]['mean']:.4g} [{e[k]['low']:.4g}, {e[k]['high']:.4g}]" for k in metrics))
rng = random.Random(0)
n = r["test_trajectories"]
idx = [[rng.randrange(n) for _ in range(n)] for _ in range(10000)]
for k in metrics:
    v = {m["label"]: m["evaluation"]["trajectory_values"][k] for m in ms}
    labels = list(v)
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            ratio = sum(v[a]) / sum(v[b])
            boot = sorted(sum(v[a][j] for j in s) / sum(v[b][j] for j in s) for s in idx)
            lo, hi = boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]
            print(f"{k}: {a} / {b} = {ratio:.3f} [{lo:.3f}, {hi:.3f}]")
