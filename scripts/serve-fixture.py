#!/usr/bin/env python3
"""A store of saved results for `engine serve`'s tests and benchmark.

    scripts/serve-fixture.py DIR [--history N] [--fleet HOSTS] [--many N] [--hostile]

Writes DIR/NAME/result.json files as engine saves them (schema 1):
  --history N   N nightly results of one machine, test `io` steps +30 % at N/2
  --fleet H     one result `fleet` of H hosts in three disk groups, hosts
                17 and H-1 at 0.6x their group in case 0
  --many N      N results of --hosts hosts (default 40) each, for the index benchmark
  --hostile     a result whose every text is markup, script and control text
Deterministic: the same arguments give the same bytes.
"""
import argparse, json, math, os, random, sys

ENGINE_VERSION = os.environ.get("ENGINE_VERSION", "0.1.0")
MODELS = ["Samsung SSD 860", "WDC WD5000AZRX", "INTEL SSDPE2KX010T8"]


def stamp(day, hour=10):
    y, m, d = 2026, 1 + (day // 28) % 12, 1 + day % 28
    return f"{y + day // 336:04d}-{m:02d}-{d:02d}T{hour:02d}:00:00Z"


def entry(ident, level, rng, when, n=3):
    trials = [level * (1 + 0.015 * rng.gauss(0, 1)) for _ in range(n)]
    mean = sum(trials) / n
    sd = math.sqrt(sum((t - mean) ** 2 for t in trials) / (n - 1))
    s = sorted(trials)
    return {"identifier": ident, "value": mean, "trials": trials, "sd": sd, "se": sd / math.sqrt(n), "n": n,
            "min": s[0], "max": s[-1], "median": s[n // 2], "trial_seconds": [1.0] * n, "timestamp": when}


def result(case, entries, title="Engine I/O", unit="IOPS"):
    return {"test": f"io@1.0[case={case}]", "profile": "io", "profile_version": "1.0.0", "result": "iops",
            "title": title, "description": f"Case {case}", "options": [], "unit": unit, "proportion": "HIB",
            "entries": entries}


def system(ident, model, when, tags=None, kernel="6.1.0-26-amd64 (x86_64)"):
    s = {"identifier": ident, "hardware": {"Disk": f"1000GB {model}", "CPU": "AMD EPYC 7B13 (2 cores)"},
         "software": {"Kernel": kernel, "File-System": "ext4"}, "started": when, "finished": when,
         "engine_version": ENGINE_VERSION}
    if tags:
        s["tags"] = tags
    return s


def save(root, name, f):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "result.json"), "w") as out:
        json.dump(f, out, indent=1 if len(f["systems"]) < 30 else None)


def history(root, n):
    rng = random.Random(7)
    for i in range(n):
        when = stamp(i)
        level = 1000.0 * (1.3 if i >= n // 2 else 1.0)
        f = {"schema_version": 1, "title": f"Nightly {i + 1:04d}", "description": "nightly CI run",
             "systems": [system("ci-box", MODELS[0], when, {"branch": "main"})],
             "results": [result(0, [entry("ci-box", level, rng, when)])]}
        save(root, f"nightly-{i + 1:04d}", f)


def fleet(root, hosts):
    rng = random.Random(11)
    systems, by_case = [], {0: [], 1: [], 2: []}
    for i in range(hosts):
        ident, model = f"host-{i:04d}", MODELS[i % 3]
        when = stamp(3)
        systems.append(system(ident, model, when, {"rack": f"r{i % 8}"}))
        own = 1 + 0.02 * rng.gauss(0, 1)
        for k in range(3):
            slow = 0.6 if k == 0 and i in (17, hosts - 1) else 1.0
            by_case[k].append(entry(ident, [1000.0, 2000.0, 3000.0][i % 3] * (k + 1) * own * slow, rng, when))
    f = {"schema_version": 1, "title": f"Fleet of {hosts}", "description": "", "systems": systems,
         "results": [result(k, by_case[k]) for k in range(3)]}
    save(root, "fleet", f)


def many(root, n, hosts):
    rng = random.Random(13)
    for i in range(n):
        when = stamp(i % 3000, i % 24)
        ids = [f"node-{j}" for j in range(hosts)]
        kernel = ["6.1.0-26-amd64", "6.12.9", "5.15.0"][i % 3]
        f = {"schema_version": 1, "title": f"Run {i}", "description": f"batch {i // 100}",
             "systems": [system(x, MODELS[(i + j) % 3], when, {"team": f"t{i % 5}"}, kernel)
                         for j, x in enumerate(ids)],
             "results": [result(k, [entry(x, 1000.0 * (k + 1), rng, when) for x in ids]) for k in range(2)]}
        save(root, f"run-{i:05d}", f)


EVIL = "<script>document.title='PWNED'</script><img src=x onerror=\"document.title='PWNED'\">\u001b]0;owned\u0007\"'&"


def hostile(root):
    rng = random.Random(3)
    when = stamp(5)
    ident = "evil" + EVIL
    s = system(ident, EVIL, when, {"k" + EVIL: "v" + EVIL})
    s["software"]["Kernel"] = EVIL
    r = result(0, [entry(ident, 5.0, rng, when)], title="T" + EVIL, unit="IOPS")
    r["description"] = "D" + EVIL
    f = {"schema_version": 1, "title": "Hostile " + EVIL, "description": EVIL, "systems": [s], "results": [r]}
    save(root, "hostile", f)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir")
    p.add_argument("--history", type=int, default=0)
    p.add_argument("--fleet", type=int, default=0)
    p.add_argument("--many", type=int, default=0)
    p.add_argument("--hosts", type=int, default=40)
    p.add_argument("--hostile", action="store_true")
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    if a.history:
        history(a.dir, a.history)
    if a.fleet:
        fleet(a.dir, a.fleet)
    if a.many:
        many(a.dir, a.many, a.hosts)
    if a.hostile:
        hostile(a.dir)


if __name__ == "__main__":
    sys.exit(main())
