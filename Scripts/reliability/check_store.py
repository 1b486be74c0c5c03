"""Checks a pushtrail store against the NDJSON it was ingested from.

usage: check_store.py PUSHTRAIL STORE INPUT (--partial | --complete)

--partial: verify passes; every stored event is one of the input's lines, byte for
           byte; no line is stored twice.
--complete: the same, and every input line is stored.
Prints one line of figures; exits 1 with the reason on a failure.
"""
import json
import subprocess
import sys


def main() -> int:
    binary, store, input_path, mode = sys.argv[1:5]
    verify = subprocess.run([binary, "--store", store, "verify", "--json"], capture_output=True, text=True)
    if verify.returncode != 0:
        print(f"verify failed (exit {verify.returncode}): {verify.stdout.strip()} {verify.stderr.strip()}")
        return 1
    report = json.loads(verify.stdout)
    with open(input_path, "rb") as f:
        wanted = set(line.rstrip(b"\n") for line in f if line.strip())
    raw = subprocess.run([binary, "--store", store, "log", "--raw"], capture_output=True)
    if raw.returncode != 0:
        print(f"log --raw failed: {raw.stderr.decode(errors='replace').strip()}")
        return 1
    stored = [line for line in raw.stdout.split(b"\n") if line]
    if len(stored) != report["events"]:
        print(f"log lists {len(stored)} events, verify counted {report['events']}")
        return 1
    if len(set(stored)) != len(stored):
        print(f"{len(stored) - len(set(stored))} events are stored twice")
        return 1
    strangers = [s for s in stored if s not in wanted]
    if strangers:
        print(f"{len(strangers)} stored events are not input lines, e.g. {strangers[0][:120]!r}")
        return 1
    if mode == "--complete" and len(stored) != len(wanted):
        print(f"{len(stored)} of {len(wanted)} input events stored after the final ingest")
        return 1
    print(f"ok: {len(stored)} events stored, chain verified, head seq {report['head']['seq']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
