#!/usr/bin/env python3
"""Lists the Swift lines over 120 columns (counted in Unicode scalars, as swift-format
counts them) in the given directories; exits 1 when there are any."""
import os
import sys

LIMIT = 120
long = []
for root in sys.argv[1:] or ["Sources", "Tests", "Fuzz"]:
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    width = len(line.rstrip("\n"))
                    if width > LIMIT:
                        long.append("%s:%d: %d columns" % (path, number, width))
for entry in long:
    print(entry)
if long:
    print("%d lines over %d columns" % (len(long), LIMIT), file=sys.stderr)
    sys.exit(1)
