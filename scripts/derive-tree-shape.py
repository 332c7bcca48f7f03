#!/usr/bin/env python3
"""Derives the shape of the `compile` workload's source tree from a real
Linux source tarball (Debian: `apt-get install linux-source-6.1`, then
`scripts/derive-tree-shape.py /usr/src/linux-source-6.1.tar.xz`).

Prints the numbers crates/engine-core/src/workloads/compile.rs embeds: the directory
count, quantiles of files per directory, the mix of .c / .h / other files,
and quantiles of each kind's size. The workload draws a tree from these with
a seeded generator, so every run builds the same tree.
"""
import collections, statistics, sys, tarfile

# 0, 5 %, …, 95 %, then finer in the tail, where a few huge generated
# headers live (sampled log-uniformly between points, the tail decides the total).
QUANTS = [i / 20 for i in range(20)] + [0.975, 0.99, 0.995, 0.999, 1.0]

def quantiles(values):
    v = sorted(values)
    return [v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))] for q in QUANTS]

def main(path):
    per_dir = collections.Counter()
    sizes = {"c": [], "h": [], "other": []}
    dirs = set()
    with tarfile.open(path) as t:
        for m in t:
            if m.isdir():
                dirs.add(m.name.rstrip("/"))
                continue
            if not m.isfile():
                continue
            d = m.name.rsplit("/", 1)[0]
            dirs.add(d)
            per_dir[d] += 1
            kind = "c" if m.name.endswith(".c") else "h" if m.name.endswith(".h") else "other"
            sizes[kind].append(m.size)
    counts = [per_dir.get(d, 0) for d in dirs]
    total = sum(len(v) for v in sizes.values())
    print(f"// {path}: {len(dirs)} directories, {total} files, {sum(sum(v) for v in sizes.values())} bytes")
    print(f"const DIRS: u32 = {len(dirs)};")
    print(f"const FILES_PER_DIR: [u32; {len(QUANTS)}] = {quantiles(counts)};")
    for k in ("c", "h", "other"):
        print(f"// {k}: {len(sizes[k])} files ({100 * len(sizes[k]) / total:.1f} %), median {statistics.median(sizes[k]):.0f} bytes")
    print(f"const KIND_PERMILLE: [u32; 3] = [{round(1000 * len(sizes['c']) / total)}, {round(1000 * len(sizes['h']) / total)}, {1000 - round(1000 * len(sizes['c']) / total) - round(1000 * len(sizes['h']) / total)}];")
    for k, name in (("c", "C"), ("h", "H"), ("other", "OTHER")):
        print(f"const {name}_SIZE: [u32; {len(QUANTS)}] = {quantiles(sizes[k])};")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/usr/src/linux-source-6.1.tar.xz")
