#!/usr/bin/env python3
"""Synthetic fleets for scripts/bench-fleet-scale.sh and by hand: one
result.json per host, as `engine benchmark` writes them — a system with
hardware, software and notes, RESULTS results (two per test) of TRIALS
trials each with per-trial seconds and device counters (shared by a test's
results, which come from the same trials) — under OUT/host-N/result.json.

Hosts fall in disk-model groups (four models, one in ten hosts on the
smallest); each group has its own level per result, each host a small
offset of its own (SD 2 %) and trial noise (SD 1.5 %). `--slow K` plants K
slow hosts (0.6× in every result of their group's first test). Seeded: the
same arguments give the same files.

Usage: fleet-synth.py HOSTS OUT [--results 68] [--trials 5] [--slow 0] [--seed 1]
"""
import argparse
import json
import os
import random

MODELS = [("Samsung SSD 860", 0.4), ("WDC WD5000AZRX", 0.3), ("INTEL SSDPE2KX010T8", 0.2), ("ST1000DM010", 0.1)]


def system(i, model):
    return {
        "identifier": f"host-{i:05d}",
        "hardware": {
            "Processor": "Intel Xeon E5-2680 v4 (28 Cores)",
            "Memory": "128 GiB",
            "Disk": f"1000GB {model}",
            "Network": "Intel Ethernet Controller X710",
        },
        "software": {"OS": "Debian 12", "Kernel": "6.1.0-26-amd64 (x86_64)", "File-System": "ext4"},
        "notes": {
            "Disk Notes": f"MQ-DEADLINE / relatime,rw / ext4 on sda / sda: read_ahead_kb=128 rotational=0 ({model})",
            "Processor Notes": "Scaling Governor: performance - CPU Microcode: 0xb000040",
        },
        "target_dir": "/var/tmp/engine",
        "started": "2026-12-01T10:00:00Z",
        "finished": "2026-12-01T10:40:00Z",
        "engine_version": "0.1.0",
    }


def counters(n, rng):
    """A trial's device and CPU counters, for each of n trials."""
    return [
        {
            "devices": [{"device": "sda", "read_bytes": rng.randrange(1 << 30), "written_bytes": rng.randrange(1 << 28),
                         "reads": rng.randrange(100000), "writes": rng.randrange(10000), "busy_ms": rng.randrange(3000)}],
            "user_seconds": round(rng.random(), 6),
            "system_seconds": round(rng.random(), 6),
        }
        for _ in range(n)
    ]


def entry(ident, values, seconds, io):
    n = len(values)
    mean = sum(values) / n
    sd = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    s = sorted(values)
    med = (s[(n - 1) // 2] + s[n // 2]) / 2
    return {
        "identifier": ident, "value": mean, "trials": values, "sd": sd, "se": sd / n ** 0.5, "n": n,
        "min": s[0], "max": s[-1], "median": med, "added_trials": [], "warning": None, "stopped": "target",
        "budget": 60.0, "trial_seconds": seconds, "trial_io": io, "timestamp": "2026-12-01T10:20:00Z",
        "logs": f"logs/{ident}/t",
    }


def main():
    a = argparse.ArgumentParser()
    a.add_argument("hosts", type=int)
    a.add_argument("out")
    a.add_argument("--results", type=int, default=68)
    a.add_argument("--trials", type=int, default=5)
    a.add_argument("--slow", type=int, default=0)
    a.add_argument("--seed", type=int, default=1)
    o = a.parse_args()
    rng = random.Random(o.seed)
    tests = [(f"io@1.0[block_size=4k,case={r // 2}]", "iops" if r % 2 else "mb_s") for r in range(o.results)]
    level = {m: [rng.uniform(50, 5000) for _ in tests] for m, _ in MODELS}
    slow = set(rng.sample(range(o.hosts), o.slow)) if o.slow else set()
    planted = []
    for i in range(o.hosts):
        model = rng.choices([m for m, _ in MODELS], [w for _, w in MODELS])[0]
        ident = f"host-{i:05d}"
        own = rng.gauss(1.0, 0.02)
        results = []
        for k, (test, rid) in enumerate(tests):
            base = level[model][k] * own * (0.6 if i in slow and k < 2 else 1.0)
            vals = [round(base * rng.gauss(1.0, 0.015), 3) for _ in range(o.trials)]
            # A test's results come from the same trials: one set of
            # seconds and counters for both, as engine writes them.
            if k % 2 == 0:
                secs = [round(rng.uniform(1.0, 1.2), 6) for _ in range(o.trials)]
                io = counters(o.trials, rng)
            results.append({
                "test": test, "profile": "io", "profile_version": "1.0.0", "result": rid,
                "title": "Engine I/O", "description": f"Random Read - Case {k // 2}",
                "options": [{"option": "case", "name": "Case", "entry": str(k // 2), "values": {"case": str(k // 2)}}],
                "unit": "IOPS" if rid == "iops" else "MB/s", "proportion": "HIB",
                "entries": [entry(ident, vals, secs, io)],
            })
        if i in slow:
            planted.append(ident)
        d = os.path.join(o.out, ident)
        os.makedirs(d, exist_ok=True)
        f = {"schema_version": 1, "title": ident, "description": "", "systems": [system(i, model)], "results": results}
        with open(os.path.join(d, "result.json"), "w") as fh:
            json.dump(f, fh)
    with open(os.path.join(o.out, "planted.txt"), "w") as fh:
        fh.write("".join(p + "\n" for p in planted))


if __name__ == "__main__":
    main()
