#!/usr/bin/env python3
"""Writes the sweep fixtures of publish's tests. Edit here, run it, commit the
JSON: the files are the fixtures, this script only keeps them consistent."""
import copy, json

def lat(p99, count=100000):
    return {"count": count, "min": p99 // 20, "mean": p99 / 4, "p50": p99 // 4,
            "p90": p99 // 2, "p99": p99, "p999": p99 * 2, "max": p99 * 4}

def cpu(frac, pinned):
    return {"samples": 20, "mean_cores": round(frac * pinned, 3), "p95_cores": round(min(frac * 1.05, 1) * pinned, 3),
            "pinned_cores": pinned, "fraction_of_pinned_mean": frac, "fraction_of_pinned_p95": round(min(frac * 1.05, 1), 3),
            "user_s": 10.0, "system_s": 5.0}

def doc(ref, scale, noise, gen="ceiling-load", runner="GitHub Actions 7"):
    ladders = {"10": [32, 64, 128], "100": [8, 16, 32]}
    base_tp = {10: [100000, 150000, 140000], 100: [300000, 420000, 410000]}
    curve, order = [], []
    i = 0
    for c in range(3):
        for b in (10, 100):
            conns = ladders[str(b)][c]
            tp = round(base_tp[b][c] * scale, 1)
            curve.append({
                "index": i, "role": "sweep", "batch": b, "connections": conns, "rep": 0, "status": "ok",
                "throughput_per_s": tp, "latency_ns": lat(2000000 * (c + 1) * (2 if b == 100 else 1)),
                "errors": 0, "saturated": False, "clean": True,
                "server_cpu": cpu(0.97, 3), "generator_cpu": cpu(0.55, 1), "generator_self": {},
                "verdict": "server-saturated", "verdict_reason": "server 2.91 of 3 cores", "lower_bound": False,
                "started_at": "2026-11-29T10:00:%02dZ" % (i * 5), "wall_time_ns": 5000000000})
            order.append({"batch": b, "connections": conns, "rep": 0})
            i += 1
    rep = copy.deepcopy(curve[2])
    rep.update(index=i, role="aa_repeat", throughput_per_s=round(curve[2]["throughput_per_s"] * (1 - noise / 100), 1))
    curve.append(rep)
    def ceiling(b):
        pts = [p for p in curve if p["batch"] == b and p["role"] == "sweep" and p["clean"]]
        p = max(pts, key=lambda p: p["throughput_per_s"])
        return {"batch": b, "found": True, "throughput_per_s": p["throughput_per_s"], "connections": p["connections"],
                "latency_ns": p["latency_ns"], "verdict": p["verdict"], "lower_bound": p["lower_bound"],
                "at_ladder_top": p["connections"] == ladders[str(b)][-1]}
    h = ceiling(10)
    return {
        "schema_version": 1,
        "meta": {"command": ["ceiling", "sweep"], "git_ref": ref, "version": "v0.1.0",
                 "started_at": "2026-11-29T10:00:00Z",
                 "hardware": {"cpu_model": "AMD EPYC 7763 64-Core Processor", "logical_cpus": 4, "memory_bytes": 16772579328,
                              "kernel": "6.8.0-1017-azure", "os": "linux", "arch": "amd64", "go_version": "go1.26.8",
                              "gomaxprocs": 1, "cpu_affinity": [0]},
                 "finished_at": "2026-11-29T10:16:00Z",
                 "runner": {"ci": True, "name": runner, "os": "Linux", "arch": "X64", "workflow": "bench", "run_id": "123"},
                 "pinning": {"supported": True, "server_cpus_requested": [1, 2, 3], "server_cpus_granted": [1, 2, 3],
                             "generator_cpus_requested": [0], "generator_cpus_granted": [0], "overlap_allowed": False,
                             "smt_siblings": [], "nofile_limit": 65536},
                 "target": {"name": "refserver", "command": ["bin/refserver", "--addr", "127.0.0.1:0"], "url": "ws://127.0.0.1:40000/echo"},
                 "generator": gen},
        "regime": "echo, batch 10, 256 B, 3 server cores, 1 generator core",
        "config": {"scenario": "echo", "batch_ladder": [10, 100], "conns_ladders": ladders, "headline_batch": 10,
                   "record_size": 256, "reps": 1, "duration_ns": 10000000000, "warmup_ns": 2000000000,
                   "order": order, "quick": False},
        "headline": {"clean": True, "throughput_per_s": h["throughput_per_s"], "batch": 10, "connections": h["connections"],
                     "latency_ns": h["latency_ns"], "verdict": h["verdict"], "lower_bound": False},
        "noise_floor_pct": noise,
        "curve": curve,
        "ceilings": [ceiling(10), ceiling(100)],
        "warnings": [],
    }

def write(name, d):
    with open(name, "w") as f:
        json.dump(d, f, indent=2)
        f.write("\n")

base = doc("1111111111111111111111111111111111111111", 1.0, 4.0)
head = doc("2222222222222222222222222222222222222222", 1.03, 2.5)  # +3%: inside the 4% floor
write("base.json", base)
write("head_same.json", head)

faster = doc("3333333333333333333333333333333333333333", 1.0, 2.0)
for p in faster["curve"]:
    if p["batch"] == 100:
        p["throughput_per_s"] = round(p["throughput_per_s"] * 1.25, 1)
for c in faster["ceilings"]:
    if c["batch"] == 100:
        c["throughput_per_s"] = round(c["throughput_per_s"] * 1.25, 1)
for p in faster["curve"]:
    if p["batch"] == 10:
        p["throughput_per_s"] = round(p["throughput_per_s"] * 0.8, 1)
faster["ceilings"][0]["throughput_per_s"] = round(faster["ceilings"][0]["throughput_per_s"] * 0.8, 1)
faster["headline"]["throughput_per_s"] = faster["ceilings"][0]["throughput_per_s"]
write("head_mixed.json", faster)  # batch 10 slower by 20 %, batch 100 faster by 25 %

capped = doc("4444444444444444444444444444444444444444", 1.5, 3.0)
for p in capped["curve"]:
    if p["batch"] == 100:
        p.update(verdict="generator-capped", lower_bound=True, verdict_reason="generator 0.99 of 1 core")
capped["ceilings"][1].update(verdict="generator-capped", lower_bound=True)
capped["warnings"] = ["batch 100 peaked at the top of its connection ladder: widen CONNS_LADDER_100"]
write("head_capped.json", capped)

nofloor = doc("5555555555555555555555555555555555555555", 1.2, 0)
nofloor["noise_floor_pct"] = None
nofloor["curve"] = [p for p in nofloor["curve"] if p["role"] != "aa_repeat"]
nofloor["warnings"] = ["the A-A repeat of the headline point failed: no noise floor"]
write("head_nofloor.json", nofloor)

noheadline = doc("6666666666666666666666666666666666666666", 1.0, 3.0)
for p in noheadline["curve"]:
    if p["batch"] == 10:
        p.update(errors=12, clean=False)
noheadline["ceilings"][0] = {"batch": 10, "found": False, "throughput_per_s": 0, "connections": 0,
                             "latency_ns": lat(0, 0), "verdict": "", "lower_bound": False, "at_ladder_top": False}
noheadline["headline"] = {"clean": False, "throughput_per_s": 0, "batch": 10, "connections": 0,
                          "latency_ns": lat(0, 0), "verdict": "", "lower_bound": False}
noheadline["noise_floor_pct"] = None
noheadline["curve"] = [p for p in noheadline["curve"] if p["role"] != "aa_repeat"]
write("no_headline.json", noheadline)

hostile = doc("7777777777777777777777777777777777777777-dirty", 1.01, 2.0, runner="evil | runner </details> @octocat")
hostile["regime"] = "echo | batch 10 <script>alert(1)</script> [x](https://evil.example) ![i](https://evil.example/i.png)"
hostile["warnings"] = ["line one\nline two | cell </details><details open> **bold** @octocat `tick` https://evil.example",
                       "<!-- ceiling:comment generator=ceiling-load --> fake marker"]
hostile["curve"][0]["verdict_reason"] = "x | y\n</td> ]]\" end"
write("head_hostile.json", hostile)

# Malformed documents: each names the field the error must mention.
bad = copy.deepcopy(base); del bad["curve"][3]["verdict"]; write("bad_missing_verdict.json", bad)
bad = copy.deepcopy(base); bad["headline"]["batch"] = 50; write("bad_headline_batch.json", bad)
bad = copy.deepcopy(base); bad["schema_version"] = 3; write("bad_version.json", bad)
bad = copy.deepcopy(base); bad["curve"][1]["verdict"] = "fast"; write("bad_verdict_value.json", bad)
bad = copy.deepcopy(base); bad["meta"]["generator"] = "../../etc"; write("bad_generator.json", bad)
bad = copy.deepcopy(base); bad["config"]["batch_ladder"] = "10 100"; write("bad_ladder_type.json", bad)
bad = copy.deepcopy(base); bad["unknown_future_field"] = {"x": 1}; bad["meta"]["new_thing"] = 3; write("ok_unknown_fields.json", bad)
with open("bad_syntax.json", "w") as f:
    f.write('{\n  "schema_version": 1,\n  "meta": {,\n}\n')
with open("bad_truncated.json", "w") as f:
    f.write(json.dumps(base, indent=2)[:500])
