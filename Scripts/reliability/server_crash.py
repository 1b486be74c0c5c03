"""The kill loop of Scripts/server-crash-test.sh.

usage: server_crash.py PUSHTRAIL PUSHTRAIL_SERVER WORKDIR POINTS SEED [CLIENTS] [BATCH]

One store for the whole run. At each point a server starts on it, CLIENTS threads
(default 8) POST batches of BATCH new events (default 50) on keep-alive connections,
and the server is killed with SIGKILL after a random delay (0-250 ms). Then:
  - every event of every batch that got a 200 is in the store (acknowledged means
    durable), and `verify` passes;
  - a new server is started and every batch that got no answer is sent again: each
    answer is a 200 with 0 conflicts (an unanswered batch was stored whole or not
    at all), and afterwards the events of this point are in the store exactly once.
Prints one line per point; exits 1 at the first failure.
"""
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time


def start(server_binary, store, log):
    """A server on a free loopback port, and that port."""
    err = open(log, "ab")
    # A 1 MiB map at first: it grows several times during the run, between the
    # transactions of the server's own threads. A recent tier of 1,000 events in runs of
    # 200: most commits also move a slice of several runs into the main indexes, so
    # kills land in those too.
    env = dict(os.environ, PUSHTRAIL_MAP_SIZE="1048576", PUSHTRAIL_FOLD_EVENTS="1000", PUSHTRAIL_RUN_EVENTS="200")
    proc = subprocess.Popen([server_binary, "--store", store, "--listen", "127.0.0.1:0"], stderr=err, env=env)
    deadline = time.time() + 20
    while time.time() < deadline:
        with open(log, "rb") as f:
            for line in f.read().decode(errors="replace").splitlines()[::-1]:
                if "listening on http://127.0.0.1:" in line:
                    port = int(line.split("127.0.0.1:")[1].split(" ")[0])
                    if ready(port):
                        return proc, port
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        time.sleep(0.01)
    raise RuntimeError("the server did not start")


def ready(port):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/healthz")
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except OSError:
        return False


def event(template, ident):
    e = dict(template)
    e["id"] = ident
    return json.dumps(e, separators=(",", ":"))


def post(conn, body):
    conn.request("POST", "/v1/events", body=body, headers={"Content-Type": "application/x-ndjson"})
    response = conn.getresponse()
    return response.status, json.loads(response.read() or b"{}")


def ids_after(binary, store, seq):
    """The ids of the events stored after `seq`. Every event has the template's time, so
    the timeline's last ones are the newest: `log -n` walks back only over them."""
    count = head(binary, store) - seq
    if count == 0:
        return []
    out = subprocess.run([binary, "--store", store, "log", "-n", str(count), "--raw"], capture_output=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.decode(errors="replace"))
    return [json.loads(line)["id"] for line in out.stdout.split(b"\n") if line]


def head(binary, store):
    out = subprocess.run([binary, "--store", store, "head", "--json"], capture_output=True, text=True)
    return json.loads(out.stdout)["seq"]


def main() -> int:
    binary, server_binary, work = sys.argv[1:4]
    points, seed = int(sys.argv[4]), int(sys.argv[5])
    clients = int(sys.argv[6]) if len(sys.argv) > 6 else 8
    batch = int(sys.argv[7]) if len(sys.argv) > 7 else 50
    rng = random.Random(seed)
    store = os.path.join(work, "store")
    log = os.path.join(work, "server.log")
    template = json.loads(open(os.path.join(os.path.dirname(__file__), "../../Samples/events.ndjson")).readline())
    subprocess.run([binary, "--store", store, "ingest", "/dev/null"], check=True, capture_output=True)
    total_acked = total_resent = 0
    started = time.time()
    for point in range(points):
        before = head(binary, store)
        proc, port = start(server_binary, store, log)
        acked, unacked = [], []
        lock = threading.Lock()
        stop = threading.Event()

        def client(c):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            b = 0
            while not stop.is_set():
                ids = [f"p{point}-c{c}-b{b}-{i}" for i in range(batch)]
                body = "".join(event(template, i) + "\n" for i in ids).encode()
                b += 1
                try:
                    status, answer = post(conn, body)
                except (OSError, http.client.HTTPException):
                    with lock:
                        unacked.append((ids, body))
                    return
                with lock:
                    if status == 200 and answer.get("appended", 0) + answer.get("duplicates", 0) == batch:
                        acked.append(ids)
                    else:
                        unacked.append((ids, body))
                        print(f"point {point}: unexpected answer {status} {answer}", flush=True)

        threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0, 0.25))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        stop.set()
        for t in threads:
            t.join()

        verify = subprocess.run([binary, "--store", store, "verify"], capture_output=True, text=True)
        if verify.returncode != 0:
            print(f"point {point}: FAIL verify after the kill: {verify.stdout} {verify.stderr}")
            return 1
        stored = set(ids_after(binary, store, before))
        lost = [i for ids in acked for i in ids if i not in stored]
        if lost:
            print(f"point {point}: FAIL {len(lost)} acknowledged events are missing, e.g. {lost[0]}")
            return 1
        # Re-send what got no answer: duplicates, never conflicts; then the point is complete.
        proc, port = start(server_binary, store, log)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for ids, body in unacked:
            status, answer = post(conn, body)
            if status != 200 or answer.get("conflicts") != 0 or answer.get("rejected") != 0:
                print(f"point {point}: FAIL re-sending a batch: {status} {answer}")
                return 1
        conn.close()
        proc.send_signal(signal.SIGTERM)
        if proc.wait(timeout=30) != 0:
            print(f"point {point}: FAIL the server exited {proc.returncode} on SIGTERM")
            return 1
        everything = ids_after(binary, store, before)
        sent = [i for ids in acked for i in ids] + [i for ids, _ in unacked for i in ids]
        if len(everything) != len(set(everything)) or set(everything) != set(sent):
            print(f"point {point}: FAIL after re-sending: {len(everything)} stored, {len(set(sent))} sent")
            return 1
        total_acked += len(acked)
        total_resent += len(unacked)
        print(
            f"point {point}: ok: {len(acked)} batches acknowledged and kept, {len(unacked)} re-sent without a "
            f"conflict; {head(binary, store)} events, chain verified",
            flush=True,
        )
    print(
        f"server crash test: {points} kills, {total_acked} acknowledged batches all kept, {total_resent} unanswered "
        f"batches re-sent with 0 conflicts, {time.time() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
