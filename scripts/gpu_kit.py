#!/usr/bin/env python3
"""Helpers of the GPU kit (issue 24): standard library only.

  gpu_kit.py torch-flags BENCH.json BENCH.txt CONFIG.yaml
      bench_torch.py's flags for the sizes uhno's own bench used: task, grid,
      batch, input channels, U-HNO's C0, levels, K0 and the matched FNO width.
  gpu_kit.py lastloss A/log.jsonl B/log.jsonl
      the last logged training loss of two runs, and whether they are equal.
  gpu_kit.py summary WORK KIT DEADLINE ELAPSED
      summary.json of a scripts/gpu_checks.sh run, on stdout.
"""
import csv
import glob
import json
import os
import re
import sys


def read(path, limit=None):
    try:
        with open(path, errors="replace") as f:
            return f.read() if limit is None else f.read(limit)
    except OSError:
        return ""


def config_value(cfg, key):
    m = re.search(r"^\s+%s:\s*(.+)$" % re.escape(key), cfg, re.M)
    return m.group(1).strip() if m else None


def torch_flags(bench_json, bench_txt, config_yaml):
    d = json.load(open(bench_json))
    cfg = read(config_yaml)
    txt = read(bench_txt)
    task = d["results"][0]["task"]
    c0 = width = None
    batch = d["results"][0]["batch"]
    for r in d["results"]:
        m = re.search(r"C0=(\d+)", r["name"])
        if r["model"] == "uhno" and m:
            c0 = int(m.group(1))
        m = re.search(r"width=(\d+)", r["name"])
        if r["model"] == "fno" and m:
            width = int(m.group(1))
    # input shape from the table: | burgers/uhno C0=10 | 32x1x128 | ...
    m = re.search(r"^\|\s*%s/uhno[^|]*\|\s*(\d+(?:x\d+)+)\s*\|" % re.escape(task), txt, re.M)
    if not m:
        sys.exit("no input shape for %s/uhno in %s" % (task, bench_txt))
    shape = [int(v) for v in m.group(1).split("x")]
    in_ch, n, dim = shape[1], shape[2], len(shape) - 2
    levels = config_value(cfg, "levels")
    k0 = config_value(cfg, "k0")
    wm = config_value(cfg, "width_mult")
    flags = ["--dim", dim, "--task", task, "--n", n, "--batch", batch, "--in-ch", in_ch, "--out-ch", 1,
             "--c0", c0, "--fno-width", width]
    if levels:
        flags += ["--levels", levels]
    if k0:
        flags += ["--k0", k0]
    if wm:
        flags += ["--width-mult", wm]
    if c0 is None or width is None:
        sys.exit("no C0 or FNO width in %s" % bench_json)
    # uhno gives a scaled C0 the largest divisor of it not above the
    # configured sigma groups (model.UHNOForBudget); the yardstick must too.
    g = int(config_value(cfg, "groups") or 4)
    flags += ["--groups", max(d for d in range(1, g + 1) if c0 % d == 0)]
    print(" ".join(str(f) for f in flags))


def go_tests(log):
    """Pass/fail/skip counts of a `go test -test.v` log, top level and all."""
    t = read(log)
    if not t:
        return None
    res = {"pass": 0, "fail": 0, "skip": 0, "subtests_pass": 0, "subtests_fail": 0, "failed": []}
    for m in re.finditer(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", t, re.M):
        kind, name = m.group(1), m.group(2)
        top = "/" not in name
        if kind == "PASS":
            res["pass" if top else "subtests_pass"] += 1
        elif kind == "FAIL":
            res["fail" if top else "subtests_fail"] += 1
            if top:
                res["failed"].append(name)
        elif top:
            res["skip"] += 1
    res["failed"] = res["failed"][:30]
    res["panic"] = bool(re.search(r"^panic: |fatal error: ", t, re.M))
    if res["panic"]:
        runs = re.findall(r"^=== RUN\s+(\S+)", t, re.M)
        res["running_at_crash"] = runs[-1] if runs else None
    res["final"] = "PASS" if re.search(r"^PASS$", t, re.M) else ("FAIL" if re.search(r"^FAIL", t, re.M) else None)
    return res


def uhno_bench(path):
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return None
    out = []
    for r in d.get("results", []):
        out.append(dict(name=r.get("name"), model=r.get("model"), backend=r.get("backend"), batch=r.get("batch"),
                        params=r.get("params"),
                        train_ms_median=r.get("train", {}).get("median_ms"), train_ms_min=r.get("train", {}).get("min_ms"),
                        infer_ms_median=r.get("infer", {}).get("median_ms"), infer_ms_min=r.get("infer", {}).get("min_ms"),
                        peak_bytes=(r.get("memory") or {}).get("peak_bytes"),
                        **({"precision": r["precision"]} if r.get("precision") else {}),
                        **({"graph": True} if r.get("graph") else {}),
                        **step_traffic(r)))
    return out


def step_traffic(r):
    """A training step's FLOPs and least bytes (bench's counter, every phase but
    inference), for the roofline; {} when the JSON has no per-op counts."""
    ops = r.get("ops") or []
    train = [o for o in ops if o.get("phase") != "inference"]
    if not train:
        return {}
    fft = (r.get("flops") or {}).get("train_step_fft", 0)
    return {"train_flops": sum(o.get("flops", 0) for o in train) + fft, "train_bytes": sum(o.get("bytes", 0) for o in train),
            "phases": sorted({o.get("phase") for o in train})}


def torch_bench(log):
    out = []
    for line in read(log).splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            out.append({k: r.get(k) for k in ("model", "phase", "task", "n", "batch", "in_ch", "params", "width",
                                               "compile", "ms_median", "ms_min", "peak_mem_mb", "gpu")})
    notes = [l for l in read(log).splitlines() if l.startswith("# ")]
    return {"rows": out, "notes": notes[:5]} if out or notes else None


def train_log(path):
    recs = []
    for line in read(path).splitlines():
        try:
            recs.append(json.loads(line))
        except ValueError:
            pass
    tr = [r for r in recs if r.get("kind") == "train"]
    val = [r for r in recs if r.get("kind") == "val"]
    if not tr:
        return None
    res = {"steps": tr[-1]["step"], "final_loss": tr[-1].get("loss"), "elapsed_s": tr[-1].get("elapsed_s"),
           "val_loss": val[-1]["loss"] if val else None,
           "losses": {str(r["step"]): r.get("loss") for r in tr}}
    if len(tr) >= 2 and tr[-1]["elapsed_s"] > tr[0]["elapsed_s"]:
        # steps/s after the first record (which holds the warm-up and graph capture)
        res["steps_per_s"] = (tr[-1]["step"] - tr[0]["step"]) / (tr[-1]["elapsed_s"] - tr[0]["elapsed_s"])
    return res


def compare(gpu, cpu):
    if not gpu or not cpu:
        return None
    rel = []
    for s, g in gpu["losses"].items():
        c = cpu["losses"].get(s)
        if c is not None and g is not None:
            rel.append((abs(g - c) / max(abs(c), 1e-12), int(s)))
    if not rel:
        return None
    worst = max(rel)
    return {"matched_steps": len(rel), "max_rel_diff": worst[0], "at_step": worst[1],
            "final_rel_diff": abs(gpu["final_loss"] - cpu["final_loss"]) / max(abs(cpu["final_loss"]), 1e-12),
            "val_rel_diff": (abs(gpu["val_loss"] - cpu["val_loss"]) / max(abs(cpu["val_loss"]), 1e-12)
                             if gpu.get("val_loss") is not None and cpu.get("val_loss") is not None else None)}


def sanitizer(log):
    t = read(log)
    if not t:
        return None
    res = {}
    m = re.findall(r"ERROR SUMMARY: (\d+) error", t)
    if m:
        res["errors"] = int(m[-1])
    m = re.findall(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", t)
    if m:
        res["hazards"], res["race_errors"], res["race_warnings"] = (int(v) for v in m[-1])
    res["first_errors"] = re.findall(r"^========= (?:Invalid|Error|Race|.*hazard).*$", t, re.M)[:5]
    return res


def ncu(log):
    rows = [l for l in read(log).splitlines() if l.startswith('"')]
    if not rows:
        return None
    per = {}
    scale = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "second": 1e3}
    for r in csv.DictReader(rows):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        try:
            v = float(r["Metric Value"].replace(",", "")) * scale.get(r.get("Metric Unit", "nsecond"), 1e-6)
        except (KeyError, ValueError):
            continue
        name = re.sub(r"\(.*", "", r.get("Kernel Name", "?"))
        e = per.setdefault(name, [0, 0.0])
        e[0] += 1
        e[1] += v
    total = sum(e[1] for e in per.values())
    top = sorted(per.items(), key=lambda kv: -kv[1][1])[:25]
    return {"kernels_profiled": sum(e[0] for e in per.values()), "total_ms": total,
            "top": [{"kernel": k, "launches": e[0], "ms": round(e[1], 4), "share": round(e[1] / total, 4) if total else None}
                    for k, e in top]}


def ptxas(log):
    t = read(log)
    if not t:
        return None
    res = {"errors": len(re.findall(r"PTXAS ERROR|ptxas fatal|error\s*:", t)), "spills": [], "max_registers": 0}
    fn = None
    regs = {}
    for line in t.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            fn = m.group(1)
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and fn and (int(m.group(1)) or int(m.group(2))):
            res["spills"].append({"kernel": fn, "stores": int(m.group(1)), "loads": int(m.group(2))})
        m = re.search(r"Used (\d+) registers", line)
        if m and fn:
            regs[fn] = int(m.group(1))
    if regs:
        res["kernels"] = len(regs)
        res["max_registers"] = max(regs.values())
        res["over_64_registers"] = sorted([k for k, v in regs.items() if v > 64])[:30]
    return res


def summary(work, kit, deadline, elapsed):
    steps = []
    for line in read(os.path.join(work, "steps.tsv")).splitlines():
        p = line.split("\t")
        if len(p) >= 4:
            steps.append({"name": p[0], "status": p[1], "seconds": int(p[2]), "rc": int(p[3]),
                          **({"note": p[4]} if len(p) > 4 and p[4] else {})})
    logs = os.path.join(work, "logs")
    L = lambda n: os.path.join(logs, n)  # noqa: E731
    s = {"format": "uhno-gpu-kit/1", "deadline_s": int(deadline), "elapsed_s": int(elapsed),
         "counts": {k: sum(1 for x in steps if x["status"] == k) for k in ("ok", "failed", "timed_out", "skipped")},
         "steps": steps}
    env = read(L("env.log"))
    m = re.search(r"^(NVIDIA [^,\n]+), ([\d.]+), ", env, re.M)
    s["gpu"] = {"name": m.group(1), "driver": m.group(2)} if m else None
    s["libs"] = {k: (re.search(r"^%s=(.*)$" % k, env, re.M) or [None, None])[1] for k in ("UHNO_CUFFT", "UHNO_NCCL")}
    s["ptxas"] = ptxas(L("ptxas.log"))
    s["doctor_tail"] = read(L("doctor.log"))[-1500:] or None
    s["tests"] = {n: go_tests(L(n + ".log")) for n in ("cuda-test", "cuda-test-rerun", "cuda-train-test", "nccl-test")
                  if os.path.exists(L(n + ".log"))}
    bench = {}
    for task in ("burgers", "ns2d"):
        b = {"uhno_gpu": uhno_bench(os.path.join(work, "bench-%s.json" % task)),
             "uhno_cpu_here": uhno_bench(os.path.join(kit, "bench-%s-cpu.json" % task)),
             "torch_eager": torch_bench(L("torch-%s.log" % task)),
             "torch_compile": torch_bench(L("torch-compile-%s.log" % task)),
             "torch_flags": read(os.path.join(kit, "torch-%s.flags" % task)).strip() or None}
        # the headline: train ms/step, uhno beside torch, per model
        head = {}
        for who, rows in (("uhno", b["uhno_gpu"] or []),):
            for r in rows:
                head["%s_%s_train_ms" % (who, r["model"])] = r["train_ms_median"]
                head["%s_%s_infer_ms" % (who, r["model"])] = r["infer_ms_median"]
        for who in ("torch_eager", "torch_compile"):
            for r in (b[who] or {}).get("rows", []):
                head["%s_%s_%s_ms" % (who, r["model"], r["phase"])] = r["ms_median"]
        b["ms_per_step"] = head
        bench[task] = b
    s["bench"] = bench
    # every other bench JSON of the run (Table cost's shape, the text's size,
    # 3D, an older binary beside this one), by file name
    s["more_bench"] = {os.path.basename(p)[len("bench-"):-len(".json")]: uhno_bench(p)
                       for p in sorted(glob.glob(os.path.join(work, "bench-*.json")))
                       if os.path.basename(p) not in ("bench-burgers.json", "bench-ns2d.json")}
    old = read(os.path.join(kit, "uhno-cuda-old.version")).strip()
    if old:
        s["more_bench"]["old_version"] = old
    cpu = train_log(os.path.join(kit, "train-cpu.log.jsonl"))
    gpu = train_log(L("train-gpu.log.jsonl"))
    nog = train_log(L("train-gpu-nograph.log.jsonl"))
    strip = lambda r: {k: v for k, v in r.items() if k != "losses"} if r else None  # noqa: E731
    s["train"] = {"gpu": strip(gpu), "gpu_nograph": strip(nog), "cpu_reference": strip(cpu),
                  "gpu_vs_cpu": compare(gpu, cpu), "nograph_vs_cpu": compare(nog, cpu),
                  "graph_speedup": (gpu["steps_per_s"] / nog["steps_per_s"]
                                    if gpu and nog and gpu.get("steps_per_s") and nog.get("steps_per_s") else None)}
    lg = train_log(L("train-gpu-long.log.jsonl"))
    lc = train_log(os.path.join(kit, "train-cpu-long.log.jsonl"))
    s["train_long"] = {"gpu": strip(lg), "cpu_reference": strip(lc), "gpu_vs_cpu": compare(lg, lc)}
    s["sanitizers"] = {n: sanitizer(L(n + ".log")) for n in ("memcheck", "racecheck", "memcheck-failing")
                       if os.path.exists(L(n + ".log"))}
    s["ncu"] = ncu(L("ncu.log"))
    # issue 37: the card's peaks, each model's five most expensive kernels,
    # the two device faults
    try:
        s["peaks"] = json.load(open(os.path.join(work, "peaks.json")))
    except (OSError, ValueError):
        s["peaks"] = None
    per = {}
    for p in sorted(glob.glob(os.path.join(logs, "ncu-*.log"))):
        r = ncu(p)
        if r:
            r["top"] = r["top"][:5]
            per[os.path.basename(p)[len("ncu-"):-len(".log")]] = r
    s["ncu_models"] = per or None
    s["faults"] = {n: read(L(n + ".log"))[-3000:] or None for n in ("fault-oom", "fault-kill")}
    s["failing_tests"] = read(os.path.join(work, "failing-tests")).strip() or None
    s["logs"] = sorted(os.path.basename(p) for p in glob.glob(os.path.join(logs, "*")))
    json.dump(s, sys.stdout, indent=1, sort_keys=False, default=str)
    sys.stdout.write("\n")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "torch-flags":
        torch_flags(*sys.argv[2:5])
    elif len(sys.argv) == 4 and sys.argv[1] == "lastloss":
        a, b = train_log(sys.argv[2]), train_log(sys.argv[3])
        print("final_loss %s %s %s" % (a and a["final_loss"], b and b["final_loss"],
                                       "same" if a and b and a["final_loss"] == b["final_loss"] else "differ"))
    elif len(sys.argv) == 6 and sys.argv[1] == "summary":
        summary(*sys.argv[2:6])
    else:
        sys.exit(__doc__)
