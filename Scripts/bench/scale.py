#!/usr/bin/env python3
"""The measurements that predict how pushtrail scales past one machine. Run it through
Scripts/scale-bench.sh, which installs what is missing and builds the release binaries.

    scale.py --events N --workdir DIR --results DIR --bin DIR --nats PATH ...
    scale.py --render bench-results/scale-N.json

Everything here is python3 stdlib. One nats-server with JetStream on a free loopback
port in the work dir; on the same generated events, side by side:
  publish   `pushtrail publish FILE --partitions 8` into a new stream each run (the
            stream is deleted through JetStream's API in between): events/s, every
            acknowledgement awaited
  consume   `pushtrail consume --partitions 0-7` into a new store, until the store holds
            every event, then SIGTERM (must exit 0), against `pushtrail ingest` of the
            NDJSON into a new store, runs alternating: CPU per event (wait4's rusage),
            wall time, peak RssAnon (sampled every 50 ms)
  cluster   four shard stores consumed one after another (partitions 0-1, 2-3, 4-5, 6-7),
            two of them served by `pushtrail serve` with read tokens; `task`, `thread`
            and `log --user` (--json) on the single ingested store against a cluster file
            of four local shards and one of two local and two served shards, under
            hyperfine
Numbers are reported (a Markdown table on stdout, the whole result as JSON); only a
step that fails stops it. Nothing is asserted about the figures.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MARKER = ".pushtrail-scale"
MB = 1e6  # sizes and rates use MB = 10^6 bytes throughout
PARTITIONS = 8
STREAM = "PUSHTRAIL"
SHARDS = [("a", [0, 1]), ("b", [2, 3]), ("c", [4, 5]), ("d", [6, 7])]
REMOTE = ("c", "d")  # served by pushtrail serve in the mixed cluster
IDS = 5  # ids asked per kind of question
# A shard's consumer that dies is started again (on its store, as a supervisor would), up
# to this many times, so that the cluster is still measured; the deaths are reported and
# the run exits 1. The 0-7 consumer measured against ingest gets no second chance.
SHARD_RESTARTS = 3
POLL = 0.1  # seconds between looks at a consumer's store
SEED = 42
ANOMALIES = "0.02"
ANDROID_SHARE = "0.3"
TARGETS = {
    "publish_events_per_s": 50000,
    "consume_cpu_ratio": 1.3,
    "consume_rss_anon_mb": 150,
    "task_ratio": 1.2,
    "thread_ratio": 2.0,
    "user_ratio": 2.0,
}


def log(msg):
    print("scale: " + msg, file=sys.stderr, flush=True)


class Failed(Exception):
    pass


def die(msg):
    raise Failed(msg)


# ---------------------------------------------------------------- processes

class Children:
    """Every long-lived process this run starts (nats-server, consumers, servers): their
    ids go to WORK/.pids as well, so that Scripts/scale-bench.sh's trap can end them by id
    should this driver itself be killed."""

    def __init__(self, work):
        self.path = os.path.join(work, ".pids")
        self.procs = {}

    def add(self, p):
        self.procs[p.pid] = p
        self._write()

    def forget(self, pid):
        self.procs.pop(pid, None)
        self._write()

    def _write(self):
        with open(self.path + ".tmp", "w") as f:
            f.write("".join("%d\n" % pid for pid in self.procs))
        os.replace(self.path + ".tmp", self.path)

    def stop_all(self):
        for pid, p in list(self.procs.items()):
            try:
                if p.poll() is None:
                    p.terminate()
                    try:
                        p.wait(20)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
            except (OSError, ChildProcessError):
                pass
            self.forget(pid)


class RssPeak(threading.Thread):
    """The peak RssAnon of one process (the same pid across exec), read from
    /proc/PID/status every `period` seconds."""

    def __init__(self, pid, period=0.05):
        super().__init__(daemon=True)
        self.pid, self.period = pid, period
        self.stop = threading.Event()
        self.anon_kb = 0
        self.samples = 0

    def run(self):
        while not self.stop.is_set():
            try:
                with open("/proc/%d/status" % self.pid) as f:
                    for line in f:
                        if line.startswith("RssAnon:"):
                            self.anon_kb = max(self.anon_kb, int(line.split()[1]))
                            self.samples += 1
                            break
            except (OSError, ValueError):
                pass
            self.stop.wait(self.period)

    def finish(self):
        self.stop.set()
        self.join()
        return self.anon_kb


def proc_cpu(pid):
    """user+sys CPU seconds of a live process so far (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_cpu():
    """CPU seconds the whole machine has spent busy so far (/proc/stat: user, nice, system,
    irq, softirq; not idle, iowait or steal); less a run's own processes, what others took
    from the cores meanwhile."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:8]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def tail(path, n=2000):
    try:
        with open(path, "rb") as f:
            return f.read()[-n:].decode("utf-8", "replace").strip()
    except OSError:
        return ""


def timed(cmd, env, errpath, what, sample_rss=True):
    """Runs cmd to its end: (wall s, user+sys CPU s, peak RssAnon kB, busy CPU s of the
    machine meanwhile). Exit 0 or fail."""
    with open(errpath, "wb") as err:
        b0 = busy_cpu()
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env)
        peak = RssPeak(p.pid) if sample_rss else None
        if peak:
            peak.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        busy = busy_cpu() - b0
        p.returncode = os.waitstatus_to_exitcode(status)
    anon = peak.finish() if peak else None
    if p.returncode != 0:
        die("%s failed (exit %d): %s\n%s" % (what, p.returncode, " ".join(map(shlex.quote, cmd)), tail(errpath)))
    return wall, ru.ru_utime + ru.ru_stime, anon, busy


def output(cmd, env, what, ok=(0,)):
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if p.returncode not in ok:
        die("%s failed (exit %d): %s\n%s" % (what, p.returncode, " ".join(map(shlex.quote, cmd)),
                                            p.stderr.decode("utf-8", "replace").strip()[-2000:]))
    return p.stdout


def first_line(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = p.stdout.decode("utf-8", "replace").strip().split("\n")
        return out[0].strip() if out else ""
    except OSError:
        return "?"


def rm(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


# ---------------------------------------------------------------- JetStream's API

def js_api(port, subject, payload=b""):
    """One request to JetStream's API over the NATS protocol ($JS.API.…): its JSON answer."""
    inbox = b"_INBOX.pushtrail_scale.%d" % os.getpid()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        f = s.makefile("rb")
        if not f.readline().startswith(b"INFO "):
            die("nats-server on port %d did not greet with INFO" % port)
        s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n'
                  b"SUB " + inbox + b" 1\r\n"
                  b"PUB " + subject.encode() + b" " + inbox + b" %d\r\n" % len(payload) + payload + b"\r\n")
        while True:
            line = f.readline()
            if not line:
                die("nats-server closed the connection answering %s" % subject)
            if line.startswith(b"PING"):
                s.sendall(b"PONG\r\n")
            elif line.startswith(b"-ERR"):
                die("nats-server: %s" % line.decode("utf-8", "replace").strip())
            elif line.startswith(b"MSG "):
                size = int(line.split()[-1])
                return json.loads(f.read(size + 2)[:size])
            elif line.startswith(b"HMSG "):  # 503: no responders (JetStream is off)
                size = int(line.split()[-1])
                f.read(size + 2)
                die("no JetStream answered %s (is nats-server running with -js?)" % subject)


# ---------------------------------------------------------------- formatting

def med(xs):
    return statistics.median(xs) if xs else None


def fmt_s(xs):
    if not xs:
        return "—"
    f = lambda v: ("%.2f" % v) if v < 100 else ("%.0f" % v)
    return "%s s (%s–%s)" % (f(med(xs)), f(min(xs)), f(max(xs))) if len(xs) > 1 else "%s s" % f(xs[0])


def fmt_int(x):
    return "{:,.0f}".format(x)


def fmt_mb(b):
    return "%.1f MB" % (b / MB) if b < 100 * MB else "{:,.0f} MB".format(b / MB)


def fmt_ratio(x):
    return "—" if x is None else ("%.2f×" % x)


def fmt_ms(x):
    return "%.1f" % (x * 1000) if x >= 0.01 else "%.2f" % (x * 1000)


def met(ok):
    return "**met**" if ok else "**not met**"


def fmt_dur(s):
    if s is None:
        return "?"
    return "%dm%02ds" % (int(s) // 60, int(s) % 60)


# ---------------------------------------------------------------- the benchmark

class Scale:
    def __init__(self, a, children):
        self.a = a
        self.work = a.workdir
        self.kids = children
        b = a.bin
        self.pt = os.path.join(b, "pushtrail")
        self.gen = os.path.join(b, "pushtrail-gen")
        self.n = a.events
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHTRAIL_")}
        self.env["NO_COLOR"] = "1"
        self.env["LC_ALL"] = "C.UTF-8"
        self.res = {
            "kind": "scale",
            "events": self.n,
            "generator": {"seed": SEED, "anomalies": float(ANOMALIES), "android_share": float(ANDROID_SHARE)},
            "command": a.command,
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "settings": {"reps": a.reps, "query_reps": a.query_reps, "query_warmup": 3, "ids_per_kind": IDS,
                         "partitions": PARTITIONS, "nosync": False, "rss_sample_s": 0.05, "poll_s": POLL},
            "phases_s": {},
        }
        self.nats = None
        self.port = None
        self.failures = []  # steps that failed without stopping the run (a shard consumer's death)

    def path(self, *p):
        return os.path.join(self.work, *p)

    def phase(self, name, t0):
        self.res["phases_s"][name] = round(time.perf_counter() - t0, 2)

    # -- machine ---------------------------------------------------------------
    def machine(self):
        def from_file(path, prefix, cut):
            try:
                with open(path) as f:
                    for line in f:
                        if line.startswith(prefix):
                            return cut(line)
            except OSError:
                pass
            return "?"
        git = first_line(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "Sources", "Package.swift"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
        self.res["machine"] = {
            "nproc": len(os.sched_getaffinity(0)),
            "cpu": from_file("/proc/cpuinfo", "model name", lambda l: l.split(":", 1)[1].strip()),
            "memory": from_file("/proc/meminfo", "MemTotal:", lambda l: "%.1f GiB" % (int(l.split()[1]) / 1024 ** 2)),
            "kernel": platform.release(),
            "os": from_file("/etc/os-release", "PRETTY_NAME=", lambda l: l.split("=", 1)[1].strip().strip('"')),
            "swift": first_line(["swift", "--version"]),
            "nats_server": first_line([self.a.nats, "--version"]),
            "hyperfine": first_line(["hyperfine", "--version"]),
            "python3": platform.python_version(),
            "git": git + (" + uncommitted changes in Sources/" if dirty else ""),
            "fdatasync_ms": self.fdatasync_probe(),
            "loadavg_start": os.getloadavg()[0],
        }

    def fdatasync_probe(self):
        """Median latency of a 4 KiB write + fdatasync in the work dir (the cost of a commit)."""
        p = self.path("fsync-probe")
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        xs = []
        try:
            for i in range(30):
                os.pwrite(fd, os.urandom(4096), (i % 8) * 4096)
                t0 = time.perf_counter()
                os.fdatasync(fd)
                xs.append(time.perf_counter() - t0)
        finally:
            os.close(fd)
            os.unlink(p)
        return round(med(xs) * 1000, 2)

    # -- data ------------------------------------------------------------------
    def generate(self):
        t0 = time.perf_counter()
        self.ndjson = self.path("events.ndjson")
        cmd = [self.gen, "--events", str(self.n), "--seed", str(SEED), "--anomalies", ANOMALIES,
               "--android-share", ANDROID_SHARE, "-o", self.ndjson]
        log("generating %s events (%s)…" % (fmt_int(self.n), " ".join(cmd[1:-2])))
        timed(cmd, self.env, self.path("gen.err"), "pushtrail-gen", sample_rss=False)
        self.res["input"] = {"bytes": os.path.getsize(self.ndjson)}
        self.phase("generate", t0)
        t0 = time.perf_counter()
        log("reading the events: partitions, and the ids to ask about (outside the timings)…")
        self.scan()
        self.phase("prepare", t0)

    def scan(self):
        """One pass: each event's partition (CRC-32 of its task id in decimal, modulo 8; a
        delivery goes with its notification's), and the tasks, threads and users to ask
        about: IDS of each, at evenly spaced ranks of their event counts (10%, 30% … 90%),
        ties broken by first appearance."""
        per_part = [0] * PARTITIONS
        notif_task, notif_thread = {}, {}
        tasks, threads, users = {}, {}, {}  # id -> [events, first line]
        held = {}
        lines = 0

        def bump(d, k, i):
            e = d.get(k)
            if e is None:
                d[k] = [1, i]
            else:
                e[0] += 1

        with open(self.ndjson, "rb", buffering=1 << 20) as f:
            for i, raw in enumerate(f):
                if not raw.strip():
                    continue
                lines += 1
                e = json.loads(raw)
                bump(users, e["user"], i)
                t = e["type"]
                task = thread = None
                if t == "notification":
                    p = e.get("payload") or {}
                    if e.get("platform") == "android":
                        data = (p.get("android") or {}).get("data") or p.get("data") or {}
                        task, thread = data.get("task_id"), data.get("thread_id")
                        task = int(task) if isinstance(task, str) and task.isdigit() else task
                    else:
                        task, thread = p.get("task_id"), (p.get("aps") or {}).get("thread-id")
                    nid = e["id"].lower()
                    notif_task[nid] = task
                    notif_thread[nid] = thread
                elif t == "action":
                    task, thread = e.get("task_id"), e.get("thread_id")
                    nid = str(e.get("notification_id") or "").lower()
                    if thread is None and nid:
                        thread = notif_thread.get(nid)
                    if task is None and nid:
                        task = notif_task.get(nid)
                else:
                    nid = str(e.get("notification_id") or "").lower()
                    if nid not in notif_task:
                        held[nid] = held.get(nid, 0) + 1  # published once its notification is
                        continue
                    task, thread = notif_task[nid], notif_thread[nid]
                if t == "notification" and e["id"].lower() in held:
                    n = held.pop(e["id"].lower())
                    per_part[zlib.crc32(str(task).encode()) % PARTITIONS] += n
                if task is not None:
                    bump(tasks, task, i)
                if isinstance(thread, str):
                    bump(threads, thread, i)
                per_part[zlib.crc32(str(task).encode()) % PARTITIONS] += 1
        if held:
            die("%d deliveries name a notification the input never holds (publish would reject them)"
                % sum(held.values()))

        def spread(d):
            ranked = sorted(d.items(), key=lambda kv: (kv[1][0], kv[1][1]))
            picks = [ranked[int((j + 0.5) * len(ranked) / IDS)] for j in range(IDS)]
            return [{"id": k, "events": v[0]} for k, v in picks]

        self.lines = lines
        self.per_part = per_part
        self.pick = {"task": spread(tasks), "thread": spread(threads), "user": spread(users)}
        for t in self.pick["task"]:
            t["partition"] = zlib.crc32(str(t["id"]).encode()) % PARTITIONS
        self.res["input"].update({"lines": lines, "tasks": len(tasks), "threads": len(threads),
                                  "users": len(users), "events_per_partition": per_part})
        self.res["asked"] = self.pick
        log("%s events; %s tasks, %s threads, %s users; partitions hold %s–%s events" % (
            fmt_int(lines), fmt_int(len(tasks)), fmt_int(len(threads)), fmt_int(len(users)),
            fmt_int(min(per_part)), fmt_int(max(per_part))))

    # -- nats-server -----------------------------------------------------------
    def start_nats(self):
        logpath = self.path("nats.log")
        self.nats_log = open(logpath, "wb")
        p = subprocess.Popen([self.a.nats, "-js", "-sd", self.path("jetstream"), "-a", "127.0.0.1", "-p", "-1"],
                             stdin=subprocess.DEVNULL, stdout=self.nats_log, stderr=subprocess.STDOUT)
        self.kids.add(p)
        self.nats = p
        deadline = time.monotonic() + 30
        while self.port is None:
            m = re.search(rb"Listening for client connections on 127\.0\.0\.1:(\d+)", open(logpath, "rb").read())
            if m:
                self.port = int(m.group(1))
            elif p.poll() is not None or time.monotonic() > deadline:
                die("nats-server did not start (exit %s): %s" % (p.returncode, tail(logpath)))
            else:
                time.sleep(0.02)
        while b"Server is ready" not in open(logpath, "rb").read():
            if p.poll() is not None or time.monotonic() > deadline:
                die("nats-server did not get ready: %s" % tail(logpath))
            time.sleep(0.02)
        self.url = "nats://127.0.0.1:%d" % self.port
        log("nats-server with JetStream on %s (store %s)" % (self.url, self.path("jetstream")))

    def nats_cpu(self):
        return proc_cpu(self.nats.pid)

    def stream_info(self):
        r = js_api(self.port, "$JS.API.STREAM.INFO." + STREAM)
        if "error" in r:
            if r["error"].get("code") == 404:
                return None
            die("stream info: %s" % r["error"])
        return r

    def delete_stream(self):
        r = js_api(self.port, "$JS.API.STREAM.DELETE." + STREAM)
        if "error" in r and r["error"].get("code") != 404:
            die("deleting stream %s: %s" % (STREAM, r["error"]))
        if self.stream_info() is not None:
            die("stream %s is still there after its deletion" % STREAM)

    # -- publish ---------------------------------------------------------------
    def publish(self):
        t0 = time.perf_counter()
        runs = []
        for rep in range(self.a.reps):
            self.delete_stream()
            os.sync()
            log("publish %d/%d: %s events in %d partitions into a new stream…" % (
                rep + 1, self.a.reps, fmt_int(self.lines), PARTITIONS))
            c0 = self.nats_cpu()
            wall, cpu, anon, busy = timed([self.pt, "publish", self.ndjson, "--server", self.url,
                                     "--partitions", str(PARTITIONS)], self.env, self.path("publish.err"),
                                    "pushtrail publish")
            nats_cpu = self.nats_cpu() - c0
            summary = tail(self.path("publish.err"), 1000).split("\n")[-1]
            info = self.stream_info()
            msgs = info["state"]["messages"] if info else 0
            if msgs != self.lines:
                die("the stream holds %d messages after publishing %d events (%s)" % (msgs, self.lines, summary))
            runs.append({"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "nats_cpu_s": round(nats_cpu, 2),
                         "others_cpu_s": round(max(0.0, busy - cpu - nats_cpu), 2),
                         "rss_anon_peak_kb": anon, "stream_bytes": info["state"]["bytes"]})
            log("  %.2f s wall (%s events/s), publisher CPU %.2f s, nats-server CPU %.2f s; %s" % (
                wall, fmt_int(self.lines / wall), cpu, nats_cpu, summary))
        self.res["publish"] = {"summary": summary, "runs": runs,
                               "stream": {"messages": msgs, "bytes": info["state"]["bytes"],
                                          "storage": info["config"].get("storage"),
                                          "subjects": info["config"].get("subjects")}}
        self.phase("publish", t0)

    # -- ingest and consume ----------------------------------------------------
    def ingest_once(self, store):
        rm(store)
        os.sync()
        c0 = self.nats_cpu()
        wall, cpu, anon, busy = timed([self.pt, "--store", store, "ingest", "-q", self.ndjson], self.env,
                                      self.path("ingest.err"), "pushtrail ingest")
        return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "rss_anon_peak_kb": anon,
                "others_cpu_s": round(max(0.0, busy - cpu - (self.nats_cpu() - c0)), 2)}

    def head_seq(self, store):
        p = subprocess.run([self.pt, "--store", store, "head", "--json"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env)
        if p.returncode != 0:
            return 0  # not created yet
        try:
            return json.loads(p.stdout).get("seq") or 0
        except ValueError:
            return 0

    def consume_once(self, store, parts, want, what, restarts=0):
        """`pushtrail consume` of `parts` into a new store, until the store holds `want`
        events (the head's seq: every event is new), then SIGTERM, which must end it with
        exit 0. Its CPU is wait4's rusage of the pid, which `pushtrail` keeps when it
        execs pushtrail-stream. A consumer that dies before (a crash is a product bug) fails
        the run, unless `restarts` allows starting it again on the same store, which then
        resumes from the sequences it committed: every death is recorded (`crashes`), the
        figures add up the attempts, and the run ends with exit 1 after its report."""
        rm(store)
        os.sync()
        errpath = self.path("consume-%s.err" % os.path.basename(store))
        cmd = [self.pt, "--store", store, "consume", "--server", self.url, "--partitions", parts, "-q"]
        crashes = []
        cpu = 0.0
        anon = 0
        c0 = self.nats_cpu()
        b0 = busy_cpu()
        t0 = time.perf_counter()
        deadline = t0 + max(120.0, want / 2000.0)
        while True:
            err = open(errpath, "wb")
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=self.env)
            self.kids.add(p)
            peak = RssPeak(p.pid)
            peak.start()
            done = None
            status = ru = None
            while done is None:
                pid, st, r = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    status, ru = st, r
                    break
                if self.head_seq(store) >= want:
                    done = time.perf_counter() - t0
                    break
                if time.perf_counter() > deadline:
                    break
                time.sleep(POLL)
            stop_s = None
            if status is None:
                p.send_signal(signal.SIGTERM)
                t_term = time.perf_counter()
                while True:
                    pid, st, r = os.wait4(p.pid, os.WNOHANG)
                    if pid:
                        status, ru = st, r
                        break
                    if time.perf_counter() - t_term > 60:
                        p.kill()
                        _, status, ru = os.wait4(p.pid, 0)
                        break
                    time.sleep(0.01)
                stop_s = time.perf_counter() - t_term
            p.returncode = os.waitstatus_to_exitcode(status)
            self.kids.forget(p.pid)
            err.close()
            anon = max(anon, peak.finish())
            cpu += ru.ru_utime + ru.ru_stime
            if done is not None or stop_s is not None:
                break
            # It ended by itself before the store held everything.
            first = next((l for l in tail(errpath, 4000).split("\n") if l.strip()), "")
            crash = {"exit": p.returncode, "after_s": round(time.perf_counter() - t0, 2),
                     "stored": self.head_seq(store), "message": first.strip()[:300]}
            log("  %s DIED (exit %d%s) with %s of %s events stored: %s" % (
                what, p.returncode, " = signal %d" % -p.returncode if p.returncode < 0 else "",
                fmt_int(crash["stored"]), fmt_int(want), crash["message"]))
            if len(crashes) >= restarts:
                die("%s: the store did not reach %d events (it ended by itself; exit %s): %s" % (
                    what, want, p.returncode, tail(errpath)))
            crashes.append(crash)
            self.failures.append("%s died (exit %d: %s) with %d of %d events stored; restarted on its store" % (
                what, p.returncode, crash["message"], crash["stored"], want))
            with open(self.path("crashes.log"), "ab") as cl, open(errpath, "rb") as ef:
                cl.write(("==== %s, attempt %d\n" % (what, len(crashes))).encode() + ef.read())
            log("  starting it again on the same store (it resumes after the sequences it committed)…")
        busy = busy_cpu() - b0
        nats_cpu = self.nats_cpu() - c0
        if done is None:
            die("%s: the store did not reach %d events (timed out): %s" % (what, want, tail(errpath)))
        if p.returncode != 0:
            die("%s exited %d on SIGTERM, not 0: %s" % (what, p.returncode, tail(errpath)))
        stats = json.loads(output([self.pt, "--store", store, "stats", "--json"], self.env, "stats"))
        if stats["events"] != want:
            die("%s: the store holds %d events, %d expected" % (what, stats["events"], want))
        got = sorted(s["partition"] for s in stats["streams"] if s["stream"] == STREAM)
        if got != sorted(int(x) for x in expand(parts)):
            die("%s: the store holds the sequences of partitions %s, not %s" % (what, got, parts))
        out = {"wall_s": round(done, 3), "cpu_s": round(cpu, 3),
               "others_cpu_s": round(max(0.0, busy - cpu - nats_cpu), 2),
               "rss_anon_peak_kb": anon, "stop_s": round(stop_s, 3), "nats_cpu_s": round(nats_cpu, 2),
               "summary": tail(errpath, 1000).split("\n")[-1], "store_bytes": stats["store_bytes"],
               "events": stats["events"], "streams": stats["streams"]}
        if crashes:
            output([self.pt, "--store", store, "verify"], self.env, "verify of %s after its restart" % what)
            out["crashes"] = crashes
            out["verified_after_restart"] = True
        return out

    def ingest_consume(self):
        t0 = time.perf_counter()
        self.single = self.path("single")
        ing, con = [], []
        for rep in range(self.a.reps):
            log("ingest %d/%d: pushtrail ingest into a new store…" % (rep + 1, self.a.reps))
            r = self.ingest_once(self.single)
            ing.append(r)
            log("  %.2f s wall, CPU %.2f s (%.2f µs/event), RssAnon peak %.0f MB" % (
                r["wall_s"], r["cpu_s"], r["cpu_s"] / self.lines * 1e6, r["rss_anon_peak_kb"] / 1024))
            log("consume %d/%d: pushtrail consume --partitions 0-7 into a new store…" % (rep + 1, self.a.reps))
            r = self.consume_once(self.path("consumed"), "0-7", self.lines, "pushtrail consume --partitions 0-7")
            con.append(r)
            log("  %.2f s until every event was stored, CPU %.2f s (%.2f µs/event), RssAnon peak %.0f MB, "
                "nats-server CPU %.2f s; stopped %.2f s after SIGTERM; %s" % (
                    r["wall_s"], r["cpu_s"], r["cpu_s"] / self.lines * 1e6, r["rss_anon_peak_kb"] / 1024,
                    r["nats_cpu_s"], r["stop_s"], r["summary"]))
        consumed_bytes = con[-1]["store_bytes"]
        rm(self.path("consumed"))
        stats = json.loads(output([self.pt, "--store", self.single, "stats", "--json"], self.env, "stats"))
        if stats["events"] != self.lines:
            die("the ingested store holds %d events, the input %d" % (stats["events"], self.lines))
        self.res["ingest"] = {"runs": ing, "store_bytes": stats["store_bytes"], "events": stats["events"]}
        self.res["consume"] = {"partitions": "0-7", "runs": [{k: v for k, v in r.items() if k != "streams"}
                                                           for r in con],
                               "store_bytes": consumed_bytes}
        self.phase("ingest_consume", t0)

    # -- the cluster -----------------------------------------------------------
    def shards(self):
        t0 = time.perf_counter()
        self.shard_dirs = {}
        out = []
        for name, parts in SHARDS:
            want = sum(self.per_part[p] for p in parts)
            spec = "%d-%d" % (parts[0], parts[-1])
            store = self.path("shard-" + name)
            log("shard %s: pushtrail consume --partitions %s (%s events)…" % (name, spec, fmt_int(want)))
            r = self.consume_once(store, spec, want, "shard %s consume --partitions %s" % (name, spec),
                                  restarts=SHARD_RESTARTS)
            log("  %.2f s, CPU %.2f s, RssAnon peak %.0f MB, store %s" % (
                r["wall_s"], r["cpu_s"], r["rss_anon_peak_kb"] / 1024, fmt_mb(r["store_bytes"])))
            self.shard_dirs[name] = store
            r = {k: v for k, v in r.items() if k != "streams"}
            r.update({"name": name, "partitions": parts})
            out.append(r)
        total = sum(s["events"] for s in out)
        if total != self.lines:
            die("the shards hold %d events together, the input %d" % (total, self.lines))
        self.res["shards"] = out
        self.phase("shards", t0)

    def serve(self, name):
        store = self.shard_dirs[name]
        secret = output([self.pt, "token", "add", "scale-" + name, "--role", "read", "--store", store], self.env,
                        "token add").decode().strip().split("\n")[-1].strip()
        logpath = self.path("serve-%s.log" % name)
        logf = open(logpath, "wb")
        p = subprocess.Popen([self.pt, "serve", "--store", store, "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=logf, env=self.env)
        self.kids.add(p)
        deadline = time.monotonic() + 30
        while True:
            with open(logpath, "rb") as f:
                first = f.readline()
            m = re.match(rb"pushtrail-server: listening on http://127\.0\.0\.1:(\d+) ", first)
            if m:
                break
            if p.poll() is not None or time.monotonic() > deadline:
                die("pushtrail serve of shard %s did not start (exit %s): %s" % (name, p.poll(), tail(logpath)))
            time.sleep(0.02)
        self.servers.append((name, p, logf, logpath))
        return "http://127.0.0.1:%d" % int(m.group(1)), secret

    def stop_servers(self):
        for name, p, logf, logpath in self.servers:
            p.terminate()
            try:
                rc = p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
            self.kids.forget(p.pid)
            logf.close()
            if rc != 0:
                die("pushtrail serve of shard %s exited %d on SIGTERM: %s" % (name, rc, tail(logpath)))
        self.servers = []

    def cluster_files(self):
        self.servers = []
        self.qenv = dict(self.env)
        local, mixed = [], []
        for name, parts in SHARDS:
            local.append({"name": name, "partitions": parts, "store": self.shard_dirs[name]})
            if name in REMOTE:
                url, secret = self.serve(name)
                var = "PUSHTRAIL_SCALE_TOKEN_" + name.upper()
                self.qenv[var] = secret
                mixed.append({"name": name, "partitions": parts, "url": url, "token_env": var})
                log("shard %s served at %s (read token in $%s)" % (name, url, var))
            else:
                mixed.append(local[-1])
        self.clusters = {}
        for kind, shards in (("local", local), ("mixed", mixed)):
            path = self.path("cluster-%s.json" % kind)
            with open(path, "w") as f:
                json.dump({"stream": STREAM, "partitions": PARTITIONS, "shards": shards}, f, indent=1)
            self.clusters[kind] = path
            st = json.loads(output([self.pt, "stats", "--json", "--cluster", path], self.qenv, "stats --cluster"))
            if st["events"] != self.lines:
                die("stats over the %s cluster counts %d events, the input %d" % (kind, st["events"], self.lines))
        self.res["clusters"] = {"local": local, "mixed": mixed}

    # -- queries ---------------------------------------------------------------
    def question(self, kind, ident):
        if kind == "task":
            return ["task", str(ident), "--json"]
        if kind == "thread":
            return ["thread", ident, "--json"]
        return ["log", "--user", ident, "--json"]

    def where(self, target):
        return ["--store", self.single] if target == "single" else ["--cluster", self.clusters[target]]

    def answer_ids(self, kind, target, ident):
        """The event ids of an answer, and the task's state: the check that a cluster
        answers what the single store does."""
        cmd = [self.pt] + self.question(kind, ident) + self.where(target)
        out = output(cmd, self.qenv, "%s over %s" % (" ".join(cmd[1:3]), target))
        if kind == "log" or kind == "user":
            ids = sorted(json.loads(l)["event"]["id"] for l in out.splitlines() if l.strip())
            return {"events": ids}
        d = json.loads(out)
        if kind == "task":
            return {"events": sorted(h["id"] for h in d["history"]), "state": d["state"]}
        return {"events": sorted(e["id"] for e in d["events"])}

    def queries(self):
        t0 = time.perf_counter()
        targets = ["single", "local", "mixed"]
        R = self.a.query_reps
        res = {}
        checks = []
        for kind in ("task", "thread", "user"):
            res[kind] = []
            for pick in self.pick[kind]:
                ident = pick["id"]
                answers = {t: self.answer_ids(kind, t, ident) for t in targets}
                for t in ("local", "mixed"):
                    if answers[t] != answers["single"]:
                        checks.append("%s %s over the %s cluster: %d events%s, the single store %d%s" % (
                            kind, ident, t, len(answers[t]["events"]),
                            " (%s)" % answers[t].get("state") if kind == "task" else "",
                            len(answers["single"]["events"]),
                            " (%s)" % answers["single"].get("state") if kind == "task" else ""))
                        log("MISMATCH: " + checks[-1])
                jpath = self.path("hyperfine-%s-%s.json" % (kind, re.sub(r"[^A-Za-z0-9_.-]", "_", str(ident))))
                cmd = ["hyperfine", "-N", "--warmup", "3", "--runs", str(R), "--export-json", jpath, "--style", "basic"]
                for t in targets:
                    cmd += ["-n", t, " ".join(shlex.quote(x) for x in [self.pt] + self.question(kind, ident)
                                              + self.where(t))]
                log("%s %s (%d events): hyperfine, %d runs each on the single store and both clusters…" % (
                    kind, ident, pick["events"], R))
                with open(self.path("hyperfine.log"), "ab") as hl:
                    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=hl, stderr=subprocess.STDOUT,
                                       env=self.qenv)
                if p.returncode != 0:
                    die("hyperfine failed (exit %d): %s" % (p.returncode, tail(self.path("hyperfine.log"))))
                with open(jpath) as f:
                    hf = json.load(f)["results"]
                row = {"id": ident, "events": len(answers["single"]["events"])}
                if kind == "task":
                    row["partition"] = pick["partition"]
                    row["shard"] = next(n for n, ps in SHARDS if pick["partition"] in ps)
                for t, h in zip(targets, hf):
                    row[t] = {"mean_s": h["mean"], "median_s": h["median"], "stddev_s": h["stddev"],
                              "min_s": h["min"], "max_s": h["max"]}
                log("  mean single %s ms, local %s ms, mixed %s ms" % tuple(
                    fmt_ms(row[t]["mean_s"]) for t in targets))
                res[kind].append(row)
        self.res["queries"] = res
        self.res["answer_mismatches"] = checks
        self.phase("queries", t0)

    # -- report ----------------------------------------------------------------
    def report(self):
        res = self.res
        n = res["input"]["lines"]
        rows = []
        targets = []

        def target(name, ok, value, goal):
            targets.append({"target": name, "met": bool(ok), "value": value, "goal": goal})
            return met(ok)

        pp = res["input"]["events_per_partition"]
        rows.append(["input", "%s events, %s NDJSON" % (fmt_int(n), fmt_mb(res["input"]["bytes"])), "—",
                     "%s tasks, %s threads, %s users; a partition %s–%s events" % (
                         fmt_int(res["input"]["tasks"]), fmt_int(res["input"]["threads"]),
                         fmt_int(res["input"]["users"]), fmt_int(min(pp)), fmt_int(max(pp))), "—", "—"])

        rows.append(["durability", "PUSHTRAIL_NOSYNC not set: every commit of ingest and consume synced", "—",
                     "—", "—", "—"])
        pub = res["publish"]
        walls = [r["wall_s"] for r in pub["runs"]]
        evs = n / med(walls)
        rows.append(["`publish --partitions 8`, a new stream each run (every ack awaited)", fmt_s(walls), "—",
                     "**%s events/s** (%.0f MB/s); publisher CPU %s, nats-server CPU %s" % (
                         fmt_int(evs), res["input"]["bytes"] / MB / med(walls),
                         fmt_s([r["cpu_s"] for r in pub["runs"]]), fmt_s([r["nats_cpu_s"] for r in pub["runs"]])),
                     "≥ 50,000 events/s",
                     target("publish", evs >= TARGETS["publish_events_per_s"], {"events_per_s": evs},
                            ">= 50000 events/s")])
        rows.append(["the stream on nats-server", "%s messages, %s (%s storage)" % (
            fmt_int(pub["stream"]["messages"]), fmt_mb(pub["stream"]["bytes"]), pub["stream"]["storage"]), "—",
            "%.2f× the NDJSON" % (pub["stream"]["bytes"] / res["input"]["bytes"]), "—", "—"])

        ing, con = res["ingest"]["runs"], res["consume"]["runs"]
        iw, cw = [r["wall_s"] for r in ing], [r["wall_s"] for r in con]
        rows.append(["wall: `consume --partitions 0-7` until all stored vs `ingest` of the NDJSON",
                     fmt_s(cw), fmt_s(iw),
                     "consume %s events/s, ingest %s events/s: consume ÷ ingest **%s** the time" % (
                         fmt_int(n / med(cw)), fmt_int(n / med(iw)), fmt_ratio(med(cw) / med(iw))), "—", "—"])
        ic, cc = [r["cpu_s"] for r in ing], [r["cpu_s"] for r in con]
        ratio = med(cc) / med(ic)
        rows.append(["CPU user+sys: consume vs ingest", fmt_s(cc), fmt_s(ic),
                     "**%.2f vs %.2f µs/event: %s**; nats-server CPU while consuming %s" % (
                         med(cc) / n * 1e6, med(ic) / n * 1e6, fmt_ratio(ratio),
                         fmt_s([r["nats_cpu_s"] for r in con])),
                     "≤ 1.3×", target("consume CPU per event", ratio <= TARGETS["consume_cpu_ratio"],
                                      {"consume_us": med(cc) / n * 1e6, "ingest_us": med(ic) / n * 1e6,
                                       "ratio": ratio}, "<= 1.3x ingest")])
        ca = [r["rss_anon_peak_kb"] / 1024 for r in con]
        ia = [r["rss_anon_peak_kb"] / 1024 for r in ing]
        rows.append(["peak RssAnon: consume vs ingest (every 50 ms)",
                     "%.0f MB (%.0f–%.0f)" % (med(ca), min(ca), max(ca)),
                     "%.0f MB (%.0f–%.0f)" % (med(ia), min(ia), max(ia)), "—", "consume ≤ 150 MB",
                     target("consume peak RssAnon", max(ca) <= TARGETS["consume_rss_anon_mb"],
                            {"consume_mb": max(ca), "ingest_mb": max(ia)}, "<= 150 MB")])
        rows.append(["consumer stop after SIGTERM (exit 0)", fmt_s([r["stop_s"] for r in con]), "—",
                     "—", "—", "—"])
        rows.append(["CPU of other processes during the runs (machine busy time less the run's own and "
                     "nats-server's)", "consume %s" % fmt_s([r["others_cpu_s"] for r in con]),
                     "ingest %s" % fmt_s([r["others_cpu_s"] for r in ing]),
                     "publish %s; consume's includes its store polled by `head --json` every %.1f s" % (
                         fmt_s([r["others_cpu_s"] for r in pub["runs"]]), POLL), "—", "—"])
        rows.append(["store: consumed 0-7 vs ingested", fmt_mb(res["consume"]["store_bytes"]),
                     fmt_mb(res["ingest"]["store_bytes"]),
                     fmt_ratio(res["consume"]["store_bytes"] / res["ingest"]["store_bytes"]), "—", "—"])
        shard_bytes = 0
        for s in res["shards"]:
            shard_bytes += s["store_bytes"]
            died = s.get("crashes", [])
            note = ""
            if died:
                note = ("; **the consumer died %d× (%s), was started again on its store and resumed; "
                        "verify ok; time and CPU add up the attempts**" % (
                            len(died), "; ".join("exit %d at %s events: %s" % (c["exit"], fmt_int(c["stored"]),
                                                                              c["message"]) for c in died)))
            rows.append(["shard %s, partitions %s: consume" % (s["name"], ",".join(map(str, s["partitions"]))),
                         "%.2f s; CPU %.2f s" % (s["wall_s"], s["cpu_s"]), "—",
                         "%s events (%.1f%%), store %s; %s events/s, %.2f µs/event CPU, RssAnon %.0f MB%s" % (
                             fmt_int(s["events"]), 100.0 * s["events"] / n, fmt_mb(s["store_bytes"]),
                             fmt_int(s["events"] / s["wall_s"]), s["cpu_s"] / s["events"] * 1e6,
                             s["rss_anon_peak_kb"] / 1024, note), "—", "—" if not died else "**failed**"])
        rows.append(["stores: 4 shards together vs the single ingested store", fmt_mb(shard_bytes),
                     fmt_mb(res["ingest"]["store_bytes"]),
                     fmt_ratio(shard_bytes / res["ingest"]["store_bytes"]), "—", "—"])

        names = {"task": "`task N --json`", "thread": "`thread task-N --json`", "user": "`log --user U --json`"}
        goals = {"task": ("task_ratio", "≤ 1.2×"), "thread": ("thread_ratio", "≤ 2×"), "user": ("user_ratio", "≤ 2×")}
        cl = {"local": "4 local shards", "mixed": "2 local + 2 served shards"}
        for kind in ("task", "thread", "user"):
            qs = res["queries"][kind]
            sm = statistics.mean(q["single"]["mean_s"] for q in qs)
            smed = med([q["single"]["median_s"] for q in qs])
            sizes = [q["events"] for q in qs]
            for c in ("local", "mixed"):
                m = statistics.mean(q[c]["mean_s"] for q in qs)
                mm = med([q[c]["median_s"] for q in qs])
                per = [q[c]["mean_s"] / q["single"]["mean_s"] for q in qs]
                r = m / sm
                key, goal = goals[kind]
                rows.append(["%s over %s (%d ids, %d–%d events)" % (names[kind], cl[c], len(qs), min(sizes),
                                                                    max(sizes)),
                             "%s ms mean, %s median" % (fmt_ms(m), fmt_ms(mm)),
                             "%s ms, %s" % (fmt_ms(sm), fmt_ms(smed)),
                             "**%s** (median %s; per id %s–%s)" % (fmt_ratio(r), fmt_ratio(mm / smed),
                                                                    fmt_ratio(min(per)), fmt_ratio(max(per))),
                             goal, target("%s over %s" % (kind, cl[c]), r <= TARGETS[key],
                                          {"ratio_of_means": r, "ratio_of_medians": mm / smed,
                                           "per_id": per}, goal.replace("≤ ", "<= ").replace("×", "x"))])
        bad = res.get("answer_mismatches", [])
        rows.append(["answers over both clusters vs the single store", "same events" if not bad else
                     "**%d MISMATCHES**" % len(bad), "—", "; ".join(bad) if bad else "every id asked", "—", "—"])
        self.rows = rows
        res["targets"] = targets

    def markdown(self):
        m, res, s = self.res["machine"], self.res, self.res["settings"]
        lines = ["### pushtrail scale benchmark: %s events (seed %d, anomalies %s, Android share %s)" % (
            fmt_int(res["input"]["lines"]), SEED, ANOMALIES, ANDROID_SHARE), ""]
        lines.append("`%s` · %s · git %s · total runtime %s" % (res["command"], res["started"], m["git"],
                                                             fmt_dur(res.get("runtime_s"))))
        lines.append("")
        lines.append("Machine: %d CPUs (nproc), %s, %s RAM, Linux %s, %s; fdatasync of a 4 KiB write: %.1f ms "
                     "(median); load average at the start %.2f." % (
                         m["nproc"], m["cpu"], m["memory"], m["kernel"], m["os"], m["fdatasync_ms"],
                         m["loadavg_start"]))
        lines.append("Tools: %s; %s; %s; python %s." % (m["swift"], m["nats_server"], m["hyperfine"], m["python3"]))
        lines.append("Medians (min–max) of %d run(s) of publish, ingest and consume (ingest and consume taking turns, "
                     "each into a new store after `sync`), one consume per shard; queries: hyperfine -N, 3 warm-up "
                     "and %d timed runs per id and target, %d ids per kind. One nats-server on loopback, file "
                     "storage, %d partitions. PUSHTRAIL_NOSYNC: not set (every commit synced; PUSHTRAIL_* "
                     "variables are cleared for every run)." % (s["reps"], s["query_reps"], s["ids_per_kind"],
                                                               PARTITIONS))
        lines.append("")
        lines.append("| measurement | pushtrail | baseline | ratio, rate | target | result |")
        lines.append("|---|---|---|---|---|---|")
        for r in self.rows:
            lines.append("| " + " | ".join(r) + " |")
        lines.append("")
        tg = res["targets"]
        lines.append("Targets met: %d of %d." % (sum(1 for x in tg if x["met"]), len(tg)))
        for f in res.get("failures", []):
            lines.append("**FAILED**: %s." % f)
        return "\n".join(lines)


def expand(spec):
    out = []
    for part in spec.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            out += range(int(lo), int(hi) + 1)
        else:
            out.append(int(part))
    return out


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--render":
        with open(sys.argv[2]) as f:
            print(json.load(f)["markdown"])
        return 0
    ap = argparse.ArgumentParser(prog="scale.py")
    ap.add_argument("--events", type=int, default=1000000)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--bin", required=True)  # pushtrail, pushtrail-gen and (beside them) -stream, -server, -cluster
    ap.add_argument("--nats", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--query-reps", type=int, default=30)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--command", default="Scripts/scale-bench.sh")
    ap.add_argument("--started-ns", type=int, default=None)
    a = ap.parse_args()
    t_start = time.perf_counter()

    work = os.path.abspath(a.workdir)
    root = os.path.realpath(ROOT)
    if os.path.realpath(work) == root or os.path.realpath(work).startswith(root + os.sep):
        print("scale: error: the work dir %s is inside the repository; use one outside it" % work, file=sys.stderr)
        return 1
    if os.path.exists(work):
        if not os.path.isdir(work):
            print("scale: error: %s exists and is not a directory" % work, file=sys.stderr)
            return 1
        if os.listdir(work) and not os.path.exists(os.path.join(work, MARKER)):
            print("scale: error: %s is not empty and was not made by this benchmark (no %s in it); remove it or "
                  "pass another --workdir" % (work, MARKER), file=sys.stderr)
            return 1
        shutil.rmtree(work)
    os.makedirs(work)
    open(os.path.join(work, MARKER), "w").close()
    a.workdir = work
    os.makedirs(a.results, exist_ok=True)

    kids = Children(work)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    s = Scale(a, kids)
    ok = False
    try:
        s.machine()
        s.generate()
        s.start_nats()
        s.publish()
        s.ingest_consume()
        s.shards()
        s.cluster_files()
        s.queries()
        s.stop_servers()
        ok = True
    except Failed as e:
        print("scale: error: %s" % e, file=sys.stderr, flush=True)
    finally:
        kids.stop_all()
    if not ok:
        log("work dir left for inspection: %s" % work)
        return 1
    if a.started_ns:
        s.res["runtime_s"] = round((time.time_ns() - a.started_ns) / 1e9, 1)
    else:
        s.res["runtime_s"] = round(time.perf_counter() - t_start, 1)
    s.res["failures"] = s.failures
    s.report()
    md = s.markdown()
    s.res["markdown"] = md
    out = os.path.join(a.results, "scale-%d.json" % a.events)
    with open(out, "w") as f:
        json.dump(s.res, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(md)
    log("result written to %s" % out)
    if s.failures:
        for f in s.failures:
            log("FAILED: " + f)
        log("work dir left for inspection: %s (crashes.log holds the dead consumers' stderr)" % work)
        return 1
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        log("work dir kept: %s" % work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
