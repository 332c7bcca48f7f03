#!/usr/bin/env python3
"""The same result file with the rounds' pairing removed: each entry's
`interleave` token dropped, so engine compares its states unpaired (Welch and
Fieller, as before issue 55). Used by bench-paired.sh and bench-replication.sh.
Usage: unpair.py IN.json OUT.json"""
import json, sys

f = json.load(open(sys.argv[1]))
for r in f["results"]:
    for e in r["entries"]:
        e.pop("interleave", None)
json.dump(f, open(sys.argv[2], "w"))
