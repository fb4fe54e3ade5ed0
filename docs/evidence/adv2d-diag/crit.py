#!/usr/bin/env python3
"""crit.py LOG...: PLAN.md's criterion for each run log: final validation MSE
against its best, and the training MSE over steps 4,500-5,000 against the
lowest mean over any 500-step window after step 1,000; plus the probes'
rollout relL2."""
import json, sys
for path in sys.argv[1:]:
    tr, val, probe = [], [], []
    for l in open(path):
        r = json.loads(l)
        if r.get("kind") == "train": tr.append((r["step"], r["mse"]))
        elif r.get("kind") == "val": val.append((r["step"], r["mse"]))
        elif r.get("kind") == "probe" and r.get("probe") == "dynamics":
            v = r["value"]; probe.append((r["step"], v.get("relL2", v.get("rel_l2"))))
    def win(a, b): 
        x = [m for s, m in tr if a < s <= b]; return sum(x) / len(x) if x else float("nan")
    last = win(4500, 5000)
    best_win = min(win(a, a + 500) for a in range(1000, 4501, 10))
    bv = min(val, key=lambda t: t[1])
    fv = val[-1]
    back = fv[1] > 1.5 * bv[1] or last > 1.5 * best_win
    print(f"{path}: steps {tr[-1][0]}; val MSE final {fv[1]:.3g} (step {fv[0]}), best {bv[1]:.3g} (step {bv[0]}), ratio {fv[1]/bv[1]:.2f}; "
          f"train MSE 4500-5000 {last:.3g}, lowest 500-step window after 1000 {best_win:.3g}, ratio {last/best_win:.2f}; goes backwards: {back}")
    print("   val MSE by step:", " ".join(f"{s}:{m:.2g}" for s, m in val))
    print("   probe relL2 by step:", " ".join(f"{s}:{v:.3g}" if isinstance(v, float) else f"{s}:{v}" for s, v in probe))
