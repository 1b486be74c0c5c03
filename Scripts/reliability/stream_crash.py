#!/usr/bin/env python3
"""Kills `pushtrail consume` with SIGKILL at random moments and checks exactly-once.

    stream_crash.py PUSHTRAIL PUSHTRAIL_STREAM PUSHTRAIL_GEN NATS_SERVER WORKDIR POINTS EVENTS SEED

A nats-server with JetStream on a free loopback port; EVENTS generated events published
in 8 partitions; then a consumer of partitions 0-3 started, killed with SIGKILL after a
random delay, and started again, POINTS times; then run to the end with --drain. The
store must then hold every event of partitions 0-3 exactly once, each partition in the
stream's order; `verify` must pass; the stored sequences must equal the partitions'
last sequences. The same events published again must leave the stream (JetStream's
dedupe) and the store unchanged.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import zlib

PARTITIONS = 8
OWNED = [0, 1, 2, 3]


def main():
    pt, stream_bin, gen, nats, work, points, events, seed = sys.argv[1:9]
    points, events, seed = int(points), int(events), int(seed)
    rnd = random.Random(seed)
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(work, "nats.log"), "w")
    server = subprocess.Popen([nats, "-js", "-sd", os.path.join(work, "js"), "-a", "127.0.0.1", "-p", "-1"],
                              stderr=subprocess.STDOUT, stdout=subprocess.PIPE, text=True)
    port = None
    deadline = time.time() + 20
    while port is None and time.time() < deadline:
        line = server.stdout.readline()
        log.write(line)
        m = re.search(r"Listening for client connections on 127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
    if port is None:
        print("stream-crash: nats-server did not start", file=sys.stderr)
        return 1
    url = "nats://127.0.0.1:%d" % port
    try:
        return campaign(pt, stream_bin, gen, url, work, points, events, seed, rnd)
    finally:
        server.terminate()
        server.wait(10)


def campaign(pt, stream_bin, gen, url, work, points, events, seed, rnd):
    source = os.path.join(work, "events.ndjson")
    with open(source, "wb") as f:
        subprocess.run([gen, "--events", str(events), "--seed", str(seed), "--android-share", "0.3"], stdout=f,
                       check=True)
    t0 = time.time()
    subprocess.run([stream_bin, "publish", source, "--server", url, "--partitions", str(PARTITIONS), "-q"],
                   check=True)
    print("stream-crash: published %d events in %.1f s" % (events, time.time() - t0), flush=True)

    # Which events each owned partition holds, in the order they were published; on a
    # new stream the messages take sequences 1, 2, 3… in that order.
    expected = {p: [] for p in range(PARTITIONS)}
    last_sequence = {p: 0 for p in range(PARTITIONS)}
    for sequence, (p, event_id, _) in enumerate(publication_order(source, PARTITIONS), start=1):
        expected[p].append(event_id)
        last_sequence[p] = sequence
    wanted = sum(len(expected[p]) for p in OWNED)

    store = os.path.join(work, "store")
    consume = [stream_bin, "consume", "--server", url, "--partitions", "0-3", "--store", store, "-q"]
    # How long one consume takes to commit first, and to store everything (into a
    # scratch store): the lives below are sized so that each can get past its first
    # commit and the points spread over the whole work, not land before or after it.
    scratch = os.path.join(work, "scratch")
    t0 = time.time()
    proc = subprocess.Popen([stream_bin, "consume", "--server", url, "--partitions", "0-3", "--store", scratch,
                             "-q"], stderr=subprocess.DEVNULL)
    first = None
    stored = 0
    while time.time() - t0 < 600 and stored < wanted:
        time.sleep(0.01)
        stored = head(pt, scratch) if os.path.exists(os.path.join(scratch, "data.mdb")) else 0
        if stored > 0 and first is None:
            first = time.time() - t0
    whole = time.time() - t0
    proc.kill()
    proc.wait()
    first = min(first if first is not None else whole, whole)
    print("stream-crash: one consume commits first after %.2f s and stores the %d events in %.2f s" % (
        first, wanted, whole), flush=True)
    full = None
    kills = 0
    # Each life is sized from what the one before stored, so that the kills spread over
    # the whole work, among the commits: one to four times a point's share of the events
    # a life. One that stores nothing lives longer next time (a life that starts late in
    # the stream can take longer to commit: partitions with nothing left make its
    # fetches wait); one that stores more lives shorter.
    share = wanted / max(points, 1)
    life = first
    before = 0
    for point in range(points):
        proc = subprocess.Popen(consume, stderr=subprocess.DEVNULL)
        # A few right at the start.
        delay = rnd.uniform(0.0, 0.03) if point % 10 == 0 else life * rnd.uniform(0.85, 1.15)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        stored = head(pt, store)
        verify = subprocess.run([pt, "verify", "--store", store], capture_output=True, text=True)
        if verify.returncode != 0:
            print("stream-crash: FAIL: verify after kill %d: %s" % (point + 1, verify.stdout + verify.stderr))
            return 1
        print("point %d: killed after %.0f ms: %d of %d events stored, verify ok" % (
            point + 1, delay * 1000, stored, wanted), flush=True)
        if stored == wanted and full is None:
            full = point + 1
        if point % 10 != 0 and stored < wanted:
            progress = stored - before
            if progress == 0:
                life = min(life * 1.5, 4 * whole + 0.1)
            elif progress > 4 * share:
                life = max(0.03, life * 0.75)
            elif progress < share:
                life *= 1.1
        before = stored
    r = subprocess.run(consume[:-1] + ["--drain", "-q"], capture_output=True, text=True)
    if r.returncode != 0:
        print("stream-crash: FAIL: the last consume exited %d: %s" % (r.returncode, r.stderr))
        return 1

    # Every event once, each partition in the stream's order.
    lines = subprocess.run([pt, "log", "--raw", "--store", store], capture_output=True, check=True).stdout
    ids = [json.loads(l)["id"] for l in lines.splitlines() if l.strip()]
    seqs = subprocess.run([pt, "log", "--json", "--store", store], capture_output=True, check=True).stdout
    by_seq = sorted((json.loads(l)["seq"], json.loads(l)["event"]["id"]) for l in seqs.splitlines() if l.strip())
    in_store_order = [i for _, i in by_seq]
    problems = []
    if len(ids) != wanted or len(set(ids)) != wanted:
        problems.append("%d events stored (%d distinct), %d expected" % (len(ids), len(set(ids)), wanted))
    for p in OWNED:
        mine = set(expected[p])
        order = [i for i in in_store_order if i in mine]
        if order != expected[p]:
            problems.append("partition %d is not in the stream's order" % p)
    stats = json.loads(subprocess.run([pt, "stats", "--json", "--store", store], capture_output=True,
                                      check=True).stdout)
    positions = {s["partition"]: s["sequence"] for s in stats["streams"]}
    # A consume that ends leaves the file no longer than the pages it uses (its map is
    # longer while it writes).
    size = os.path.getsize(os.path.join(store, "data.mdb"))
    if size != stats["store_bytes"]:
        problems.append("data.mdb is %d bytes after consume ended, its pages %d" % (size, stats["store_bytes"]))
    if positions != {p: last_sequence[p] for p in OWNED}:
        problems.append("stored sequences %s, the partitions end at %s" % (
            positions, {p: last_sequence[p] for p in OWNED}))
    verify = subprocess.run([pt, "verify", "--store", store], capture_output=True, text=True)
    if verify.returncode != 0:
        problems.append("verify: " + verify.stdout.strip())
    before = head(pt, store)
    again = subprocess.run([stream_bin, "publish", source, "--server", url, "--partitions", str(PARTITIONS)],
                           capture_output=True, text=True)
    duplicates = re.search(r"(\d+) stored, (\d+) already there", again.stderr)
    if not duplicates or duplicates.group(1) != "0":
        problems.append("publishing again stored new messages: " + again.stderr.strip())
    r = subprocess.run(consume[:-1] + ["--drain", "-q"], capture_output=True, text=True)
    if head(pt, store) != before:
        problems.append("consuming after publishing again changed the store")
    when = ("the store was complete after point %d" % full if full is not None
            else "every one before the store was complete")
    print("stream-crash: %d kills (%d points; %s); %d events of partitions 0-3 stored, each once and in order; "
          "positions %s" % (kills, points, when, len(ids), " ".join("%d@%d" % kv for kv in sorted(positions.items()))))
    if problems:
        for p in problems:
            print("stream-crash: FAIL: " + p)
        return 1
    print("stream-crash: ok (seed %d)" % seed)
    return 0


def publication_order(path, partitions):
    """The (partition, id, line) of each event of the NDJSON file at `path`, in the order
    `publish` sends them: each to its task's partition (CRC-32 of the task id), a delivery
    with its notification's task, right after that notification when it came first."""
    notification_task, held, out = {}, {}, []
    with open(path, "rb") as f:
        for line in f:
            line = line.rstrip(b"\n")
            if not line.strip():
                continue
            e = json.loads(line)
            task = task_of(e)
            if task is None:
                ref = str(e.get("notification_id", "")).lower()
                task = notification_task.get(ref)
                if task is None:
                    held.setdefault(ref, []).append((e["id"], line))
                    continue
            p = zlib.crc32(str(task).encode()) % partitions
            out.append((p, e["id"], line))
            if e["type"] == "notification":
                key = e["id"].lower()
                notification_task[key] = task
                out.extend((p, i, l) for i, l in held.pop(key, []))
    return out


def task_of(e):
    """The task id pushtrail files an event under: an action's `task_id`; an iOS
    notification's `payload.task_id`; an Android one's `payload.data.task_id` (a string)."""
    if e["type"] == "action":
        return e.get("task_id")
    if e["type"] == "notification":
        payload = e.get("payload") or {}
        task = payload.get("task_id", (payload.get("data") or {}).get("task_id"))
        return int(task) if task is not None else None
    return None


def head(pt, store):
    r = subprocess.run([pt, "head", "--json", "--store", store], capture_output=True, text=True)
    return json.loads(r.stdout)["seq"] if r.returncode == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
