#!/usr/bin/env bash
# Compares 200 result files of 50 tests × 5 identifiers each and renders the
# HTML report, as `engine result compare … --format html` does; prints the
# median wall time and the peak memory against the goals (1 s, 200 MB).
# Usage: scripts/bench-compare.sh [FILES] [TESTS] [IDENTIFIERS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
files=${1:-200} tests=${2:-50} ids=${3:-5} runs=${4:-5}
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$files" "$tests" "$ids" <<'PY'
import json, os, random, statistics, sys
work, files, tests, ids = sys.argv[1], *map(int, sys.argv[2:])
random.seed(1)
for f in range(files):
    systems = [{"identifier": f"f{f} state {i}", "hardware": {"Processor": "AMD EPYC (2 Cores)", "Memory": "23.5 GiB"},
                "software": {"OS": "Debian 12", "Kernel": "6.1.0 (x86_64)", "File-System": "ext4"},
                "notes": {"Disk Notes": f"BFQ / relatime,rw / ext4 on loop{i}"}, "started": "2026-11-30T00:00:00Z",
                "engine_version": "0.1.0"} for i in range(ids)]
    results = []
    for t in range(tests):
        entries = []
        for i in range(ids):
            base = 100 + t * 10 + i
            trials = [base + random.gauss(0, 2) for _ in range(3)]
            m = statistics.mean(trials); sd = statistics.stdev(trials)
            entries.append({"identifier": f"f{f} state {i}", "value": m, "trials": trials, "sd": sd, "se": sd / 3 ** 0.5,
                            "n": 3, "min": min(trials), "max": max(trials), "median": statistics.median(trials),
                            "timestamp": "2026-11-30T00:00:00Z"})
        results.append({"test": f"fio@1.0[t={t}]", "profile": "fio", "profile_version": "1.0.0", "result": "bandwidth",
                        "title": "Flexible IO Tester", "app_version": "3.33", "description": f"Type: Random Read - Block Size: {t}KB",
                        "options": [], "unit": "MB/s", "proportion": "HIB" if t % 3 else "LIB", "entries": entries})
    d = os.path.join(work, f"r{f:03}")
    os.makedirs(d)
    json.dump({"schema_version": 1, "title": f"r{f}", "description": "", "systems": systems, "results": results}, open(os.path.join(d, "result.json"), "w"))
PY
echo "== $files result files × $tests tests × $ids identifiers → one HTML report ($runs runs)"
python3 - "$ENGINE" "$work" "$runs" <<'PY'
import glob, os, resource, statistics, subprocess, sys, time
engine, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
paths = sorted(glob.glob(os.path.join(work, "r*/result.json")))
out = os.path.join(work, "report.html")
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run([engine, "result", "compare", *paths, "--format", "html", "-o", out], check=True, stderr=subprocess.DEVNULL)
    times.append(time.perf_counter() - t0)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"  median wall time {statistics.median(times)*1000:7.0f} ms   (goal 1000 ms, ratio {statistics.median(times):.2f})")
print(f"  peak memory      {rss:7.1f} MiB  (goal 200 MB = 190.7 MiB, ratio {rss * 1048576 / 200e6:.2f})")
print(f"  report size      {os.path.getsize(out) / 1e6:7.1f} MB")
PY
