#!/usr/bin/env python3
"""Lists the Swift lines over 120 columns (counted in Unicode scalars, as swift-format
counts them) under the given files and directories; exits 1 when there are any.

    Scripts/line-length.py [PATH…]     (default: Sources Tests Fuzz Package.swift)
"""
import os
import sys

LIMIT = 120


def swift_files(root):
    """`root` itself when it is a file, else the .swift files under it, in order."""
    if os.path.isfile(root):
        yield root
        return
    for dirpath, dirnames, files in os.walk(root):
        dirnames.sort()
        for name in sorted(files):
            if name.endswith(".swift"):
                yield os.path.join(dirpath, name)


def main(roots):
    long = []
    for root in roots:
        for path in swift_files(root):
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    width = len(line.rstrip("\n"))
                    if width > LIMIT:
                        long.append("%s:%d: %d columns" % (path, number, width))
    for entry in long:
        print(entry)
    if long:
        print("%d lines over %d columns" % (len(long), LIMIT), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["Sources", "Tests", "Fuzz", "Package.swift"]))
