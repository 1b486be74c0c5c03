#!/usr/bin/env python3
"""Helpers of Scripts/stream-failover-test.sh: what bash cannot easily do.

    stream_failover.py ports N
        N free loopback TCP ports, on one line.
    stream_failover.py status MONITOR_PORT [SERVER_NAME [JSZ_FILE]]
        `META LEADER MESSAGES PARTITIONS` as a server's /jsz sees them: the meta leader,
        the stream PUSHTRAIL's leader ('-' when none), its message count, and the
        partitions whose consumers SERVER_NAME leads ('-' when none). From JSZ_FILE, a
        copy of that /jsz taken earlier, when given.
    stream_failover.py expect PARTITIONS OWNED FILE...
        How many events of the partitions OWNED (0-3, 1,5…) each FILE publishes.
    stream_failover.py check PUSHTRAIL STORE CLIENT_PORT MONITOR_PORT PARTITIONS OWNED FILE...
        The store must hold every event of OWNED from the FILEs (published in that order)
        exactly once, byte for byte, each partition in publishing order; verify must pass;
        the stored positions must equal each partition's last sequence in the stream, as
        the server at CLIENT_PORT answers; the stream (MONITOR_PORT's /jsz) must hold one
        message per event. Prints one line: the positions, or `FAIL: reasons`.
"""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_crash import publication_order  # noqa: E402


def ports(n):
    sockets = [socket.socket() for _ in range(int(n))]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    print(" ".join(str(s.getsockname()[1]) for s in sockets))
    for s in sockets:
        s.close()


def jsz(port):
    url = "http://127.0.0.1:%s/jsz?streams=true&consumers=true&config=true" % port
    with urllib.request.urlopen(url, timeout=2) as r:
        return json.load(r)


def status(port, name="", saved=None):
    try:
        if saved:
            with open(saved) as f:
                d = json.load(f)
        else:
            d = jsz(port)
    except (OSError, ValueError):
        print("- - 0 -")
        return
    meta = (d.get("meta_cluster") or {}).get("leader") or "-"
    leader, messages, held = "-", 0, []
    for account in d.get("account_details") or []:
        for s in account.get("stream_detail") or []:
            if s.get("name") != "PUSHTRAIL":
                continue
            leader = (s.get("cluster") or {}).get("leader") or "-"
            messages = (s.get("state") or {}).get("messages", 0)
            for c in s.get("consumer_detail") or []:
                subject = (c.get("config") or {}).get("filter_subject", "")
                if (c.get("cluster") or {}).get("leader") == name:
                    held.append(int(subject.rsplit(".", 1)[1]))
    print(meta, leader, messages, ",".join(str(p) for p in sorted(set(held))) or "-")


def owned_list(text):
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def published(path, partitions):
    """The (id, line) pairs of each partition, in the order `publish` sends them."""
    out = {p: [] for p in range(partitions)}
    for p, event_id, line in publication_order(path, partitions):
        out[p].append((event_id, line))
    return out


def expect(partitions, owned, files):
    owned = owned_list(owned)
    counts = []
    for path in files:
        per = published(path, int(partitions))
        counts.append(sum(len(per[p]) for p in owned if p in per))
    print(" ".join(map(str, counts)))


def nats_request(port, subject, body, timeout=2.0):
    """One request over NATS's text protocol: the reply's (headers, payload)."""
    with socket.create_connection(("127.0.0.1", int(port)), timeout=timeout) as s:
        f = s.makefile("rb")
        f.readline()  # INFO
        payload = json.dumps(body).encode()
        s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n'
                  b"SUB _INBOX.failover 1\r\n"
                  + b"PUB %s _INBOX.failover %d\r\n" % (subject.encode(), len(payload)) + payload + b"\r\n")
        while True:
            line = f.readline()
            if not line:
                raise OSError("connection closed")
            if line.startswith(b"PING"):
                s.sendall(b"PONG\r\n")
            elif line.startswith(b"MSG ") or line.startswith(b"HMSG "):
                parts = line.split()
                n = int(parts[-1])
                data = f.read(n + 2)[:n]
                h = int(parts[-2]) if line.startswith(b"HMSG") else 0
                return data[:h].decode(errors="replace"), data[h:]


def last_sequence(port, stream, partition):
    """The stream sequence of the last message of `partition` (0 when none), asking
    until JetStream answers (a new leader may still be taking over)."""
    request = {"last_by_subj": "pushtrail.events.%d" % partition}
    deadline = time.time() + 20
    while True:
        try:
            headers, data = nats_request(port, "$JS.API.STREAM.MSG.GET." + stream, request)
            if data:
                answer = json.loads(data)
                if "message" in answer:
                    return answer["message"]["seq"]
                if (answer.get("error") or {}).get("err_code") == 10037:  # no message found
                    return 0
            reason = headers or data[:200]
        except (OSError, ValueError) as e:
            reason = str(e)
        if time.time() > deadline:
            raise RuntimeError("no answer for partition %d's last message: %s" % (partition, reason))
        time.sleep(0.5)


def check(pt, store, client_port, monitor_port, partitions, owned, files):
    partitions, owned = int(partitions), owned_list(owned)
    expected = {p: [] for p in owned}
    total = 0
    for path in files:
        per = published(path, partitions)
        total += sum(len(v) for v in per.values())
        for p in owned:
            expected[p] += per.get(p, [])
    wanted = sum(len(v) for v in expected.values())
    problems = []

    def run(*args):
        return subprocess.run([pt, "--store", store] + list(args), capture_output=True, check=True).stdout

    # log --json and --raw list the same events in the same order: each stored line with its seq.
    records = [json.loads(l) for l in run("log", "--json").splitlines() if l.strip()]
    raws = [l for l in run("log", "--raw").splitlines() if l.strip()]
    if len(records) != len(raws):
        problems.append("log --json lists %d events, log --raw %d" % (len(records), len(raws)))
    stored = sorted(zip((r["seq"] for r in records), (r["event"]["id"] for r in records), raws))
    ids = [i for _, i, _ in stored]
    if len(ids) != wanted or len(set(ids)) != wanted:
        problems.append("%d events stored (%d distinct), %d published in partitions %s" % (
            len(ids), len(set(ids)), wanted, ",".join(map(str, sorted(owned)))))
    partition_of = {i: p for p in owned for i, _ in expected[p]}
    for p in sorted(owned):
        mine = [(i, raw) for _, i, raw in stored if partition_of.get(i) == p]
        if mine != expected[p]:
            missing = len({i for i, _ in expected[p]} - {i for i, _ in mine})
            problems.append("partition %d: %d events stored, %d published, %d missing%s" % (
                p, len(mine), len(expected[p]), missing,
                ", not in publishing order or not byte for byte" if not missing else ""))
    strays = [i for i in ids if i not in partition_of]
    if strays:
        problems.append("%d stored events are of no partition of %s (first %s)" % (len(strays), owned, strays[0]))

    verify = subprocess.run([pt, "--store", store, "verify"], capture_output=True, text=True)
    if verify.returncode != 0:
        problems.append("verify: " + (verify.stdout + verify.stderr).strip().replace("\n", " / "))

    stats = json.loads(run("stats", "--json"))
    positions = {s["partition"]: s["sequence"] for s in stats.get("streams", [])}
    ends = {p: last_sequence(client_port, "PUSHTRAIL", p) for p in sorted(owned)}
    if {p: positions.get(p, 0) for p in owned} != ends:
        problems.append("stored positions %s, the stream's partitions end at %s" % (
            " ".join("%d@%d" % kv for kv in sorted(positions.items())),
            " ".join("%d@%d" % kv for kv in sorted(ends.items()))))
    # A follower's count may trail the leader's for a moment.
    deadline = time.time() + 10
    while (messages := jsz_messages(monitor_port)) != total and time.time() < deadline:
        time.sleep(0.2)
    if messages != total:
        problems.append("the stream holds %d messages, %d events were published" % (messages, total))
    if problems:
        print("FAIL: " + "; ".join(problems))
        return 1
    print(" ".join("%d@%d" % kv for kv in sorted(ends.items())))
    return 0


def jsz_messages(port):
    for account in jsz(port).get("account_details") or []:
        for s in account.get("stream_detail") or []:
            if s.get("name") == "PUSHTRAIL":
                return (s.get("state") or {}).get("messages", 0)
    return 0


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "ports":
        ports(*args)
    elif command == "status":
        status(*args)
    elif command == "expect":
        expect(args[0], args[1], args[2:])
    elif command == "check":
        return check(*args[:6], args[6:])
    else:
        print("stream_failover.py: unknown command " + command, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
