"""The kill loop of Scripts/crash-test.sh, in one process so the input's lines are
read and hashed once rather than at every point.

usage: crash_test.py PUSHTRAIL WORKDIR INPUT POINTS FULL_MS SEED RERUN_EVERY

Each point ingests INPUT into a fresh store and sends SIGKILL after a random delay
within FULL_MS (every tenth within the first 50 ms, while the store is created). Then: `verify` passes, every stored event (`log --raw`) is one of
the input's lines byte for byte, none is stored twice. Every RERUN_EVERY points (and
at the last) the same ingest runs again to completion and the store must then hold
exactly the input. Prints one line per point; exits 1 at the first failure.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time


def check(binary, store, wanted, complete):
    """The reason the store is wrong, or None."""
    verify = subprocess.run([binary, "--store", store, "verify", "--json"], capture_output=True, text=True)
    if verify.returncode != 0:
        return f"verify failed (exit {verify.returncode}): {verify.stdout.strip()} {verify.stderr.strip()}"
    report = json.loads(verify.stdout)
    raw = subprocess.run([binary, "--store", store, "log", "--raw"], capture_output=True)
    if raw.returncode != 0:
        return f"log --raw failed: {raw.stderr.decode(errors='replace').strip()}"
    stored = [line for line in raw.stdout.split(b"\n") if line]
    if len(stored) != report["events"]:
        return f"log lists {len(stored)} events, verify counted {report['events']}"
    if len(set(stored)) != len(stored):
        return f"{len(stored) - len(set(stored))} events are stored twice"
    strangers = [s for s in stored if s not in wanted]
    if strangers:
        return f"{len(strangers)} stored events are not input lines, e.g. {strangers[0][:120]!r}"
    if complete and len(stored) != len(wanted):
        return f"{len(stored)} of {len(wanted)} input events stored after the final ingest"
    return None


def summary(binary, store):
    head = json.loads(subprocess.run([binary, "--store", store, "head", "--json"], capture_output=True, text=True).stdout)
    return f"ok: {head['seq']} events stored, chain verified"


def main() -> int:
    binary, work, input_path = sys.argv[1:4]
    points, full_ms, seed, rerun_every = (int(a) for a in sys.argv[4:8])
    with open(input_path, "rb") as f:
        wanted = set(line.rstrip(b"\n") for line in f if line.strip())
    rng = random.Random(seed)
    store = os.path.join(work, "store")
    killed = reruns = 0
    for i in range(1, points + 1):
        shutil.rmtree(store, ignore_errors=True)
        # Every tenth point lands in the first 50 ms, where the store is being created
        # (a window a uniform draw over the whole ingest would rarely hit).
        delay_ms = rng.randint(0, min(50, full_ms)) if i % 10 == 0 else rng.randint(0, full_ms)
        with open(os.path.join(work, "err"), "wb") as err:
            p = subprocess.Popen([binary, "--store", store, "ingest", "-q", input_path],
                                 stdout=subprocess.DEVNULL, stderr=err)
            time.sleep(delay_ms / 1000)
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                killed += 1
            p.wait()
        if not os.path.exists(os.path.join(store, "data.mdb")):
            print(f"point {i}: killed at {delay_ms} ms, before the store was created", flush=True)
            continue
        problem = check(binary, store, wanted, complete=False)
        if problem:
            print(f"crash-test: FAILED after kill point {i} (at {delay_ms} ms): {problem}", flush=True)
            return 1
        print(f"point {i}: killed at {delay_ms} ms: {summary(binary, store)}", flush=True)
        if i % rerun_every == 0 or i == points:
            subprocess.run([binary, "--store", store, "ingest", "-q", input_path],
                           stdout=subprocess.DEVNULL, check=True)
            problem = check(binary, store, wanted, complete=True)
            if problem:
                print(f"crash-test: FAILED re-running after point {i}: {problem}", flush=True)
                return 1
            reruns += 1
            print(f"point {i}: re-run: {summary(binary, store)}", flush=True)
    print(f"crash-test: {killed} ingests killed mid-way, {reruns} re-runs completed the input")
    print(f"crash-test: {points} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
