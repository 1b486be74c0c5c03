#!/usr/bin/env python3
"""The pushtrail side-by-side benchmark. Run it through Scripts/bench.sh,
which installs what is missing and builds the release binaries first.

Everything here is python3 stdlib. Timings are wall-clock (time.perf_counter around
the child process, fork and exec included), each child a fresh process; CPU times
and peak RSS come from wait4(2) / /usr/bin/time and /proc/PID/status.
"""
import argparse
import datetime
import http.client
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MARKER = ".pushtrail-bench"
MB = 1e6  # sizes and rates use MB = 10^6 bytes throughout
LOADS = []  # the 1-minute load average at the start of every timed run
SERVER_ROUNDS = 3  # wrk runs of each route, alternating; memory is compared between the first and the last
CLI_RUNS = 200  # CLI processes per question, in sequence and then two at a time
APPEND_CLIENTS = (1, 2, 4)  # concurrent POST clients


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def die(msg):
    print("bench: error: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


# ---------------------------------------------------------------- running things

class Run:
    __slots__ = ("wall", "cpu", "rc", "maxrss_kb", "anon_kb", "file_kb", "stderr", "written")

    def __init__(self):
        self.wall = self.cpu = 0.0
        self.written = 0
        self.rc = 0
        self.maxrss_kb = self.anon_kb = self.file_kb = None
        self.stderr = ""


def wchar():
    """Bytes this process and its reaped children have caused to be written to storage
    (/proc/self/io write_bytes, counted as pages are dirtied, whether by write calls or
    through a writable map; a reaped child's I/O counts are added to its parent's)."""
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _child_of(ppid):
    """The first child of ppid (the process /usr/bin/time forked), or None."""
    try:
        with open("/proc/%d/task/%d/children" % (ppid, ppid)) as f:
            kids = f.read().split()
        if kids:
            return int(kids[0])
        return None
    except OSError:
        pass
    for d in os.listdir("/proc"):          # kernels without CONFIG_PROC_CHILDREN
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            if int(st[st.rindex(")") + 2:].split()[1]) == ppid:
                return int(d)
        except (OSError, ValueError):
            continue
    return None


class RssSampler(threading.Thread):
    """Samples RssAnon / RssFile of the child of `ppid` every `period` seconds."""

    def __init__(self, ppid, period=0.05):
        super().__init__(daemon=True)
        self.ppid, self.period = ppid, period
        self.stop = threading.Event()
        self.anon_kb = self.file_kb = 0
        self.samples = 0

    def run(self):
        pid = None
        while not self.stop.is_set():
            if pid is None:
                pid = _child_of(self.ppid)
            if pid is not None:
                try:
                    with open("/proc/%d/status" % pid) as f:
                        for line in f:
                            if line.startswith("RssAnon:"):
                                self.anon_kb = max(self.anon_kb, int(line.split()[1]))
                            elif line.startswith("RssFile:"):
                                self.file_kb = max(self.file_kb, int(line.split()[1]))
                    self.samples += 1
                except (OSError, ValueError):
                    pass
            self.stop.wait(self.period)


def verify_reps(ingest_reps, events):
    """How many timed verify runs follow the first one: at least five up to 2M events,
    where a run takes a second or two and the noise of a shared machine moves a median
    of three; at least three above that (a run takes ten seconds at 10M)."""
    return max(ingest_reps, 5) if events <= 2_000_000 else max(ingest_reps, 3)


def run(cmd, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, ok=(0,), rss=False,
        env=None, what=None):
    """Runs cmd once, timed. With rss=True it runs under /usr/bin/time -f %M and
    samples the process's RssAnon every 50 ms."""
    r = Run()
    la = loadavg()
    if la is not None:
        LOADS.append(la)
    errf = tempfile.TemporaryFile()
    timef = None
    if rss:
        timef = tempfile.NamedTemporaryFile(prefix="time-", delete=False)
        timef.close()
        cmd = ["/usr/bin/time", "-f", "%M", "-o", timef.name] + list(cmd)
    w0 = wchar()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stdin=stdin, stderr=errf, env=env)
    sampler = None
    if rss:
        sampler = RssSampler(p.pid)
        sampler.start()
    _, status, ru = os.wait4(p.pid, 0)
    r.wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    r.rc = p.returncode
    r.cpu = ru.ru_utime + ru.ru_stime
    w1 = wchar()
    r.written = (w1 - w0) if (w0 is not None and w1 is not None) else None
    if sampler is not None:
        sampler.stop.set()
        sampler.join()
        r.anon_kb, r.file_kb = sampler.anon_kb, sampler.file_kb
    errf.seek(0)
    r.stderr = errf.read().decode("utf-8", "replace")
    errf.close()
    if timef is not None:
        try:
            with open(timef.name) as f:
                lines = [l for l in f.read().split("\n") if l.strip()]
            r.maxrss_kb = int(lines[-1])
        except (OSError, ValueError, IndexError):
            r.maxrss_kb = None
        os.unlink(timef.name)
    if r.rc not in ok:
        die("%s failed (exit %d): %s\n%s" % (what or cmd[0], r.rc, " ".join(map(shlex.quote, cmd)),
                                            r.stderr.strip()[-2000:]))
    return r


def output(cmd, ok=(0,)):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in ok:
        die("%s failed (exit %d): %s" % (cmd[0], p.returncode, p.stderr.decode("utf-8", "replace").strip()))
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


def dir_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for name in os.listdir(path):
        p = os.path.join(path, name)
        if os.path.isfile(p):
            total += os.path.getsize(p)
    return total


def med(xs):
    return statistics.median(xs) if xs else None


def sql_str(s):
    return "'" + s.replace("'", "''") + "'"


# ---------------------------------------------------------------- formatting

def fmt_time(xs, unit=None):
    """median (min–max) of a list of seconds."""
    if not xs:
        return "—"
    m, lo, hi = med(xs), min(xs), max(xs)
    if unit is None:
        unit = "ms" if m < 1 else "s"
    if unit == "ms":
        f = lambda v: "%.1f" % (v * 1000)
        return "%s ms (%s–%s)" % (f(m), f(lo), f(hi)) if len(xs) > 1 else "%s ms" % f(m)
    f = lambda v: ("%.2f" % v) if v < 100 else ("%.0f" % v)
    return "%s s (%s–%s)" % (f(m), f(lo), f(hi)) if len(xs) > 1 else "%s s" % f(m)


def fmt_ratio(x):
    if x is None:
        return "—"
    if x >= 100:
        return "{:,.0f}×".format(x)
    if x >= 10:
        return "%.1f×" % x
    return "%.2f×" % x


def fmt_int(x):
    return "{:,.0f}".format(x)


def fmt_mb(b):
    return "%.1f MB" % (b / MB) if b < 100 * MB else "{:,.0f} MB".format(b / MB)


def met(ok):
    return "**met**" if ok else "**not met**"


# ---------------------------------------------------------------- the server

class Server:
    """pushtrail-server over a store on 127.0.0.1:0. Its access log (a line per request)
    goes to a file; the port is read from the start line."""

    def __init__(self, exe, store, logpath, env):
        self.logpath = logpath
        self.logf = open(logpath, "wb")
        self.p = subprocess.Popen([exe, "--store", store, "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=self.logf, env=env)
        self.pid = self.p.pid
        self.port = None
        deadline = time.monotonic() + 30
        while self.port is None:
            with open(logpath, "rb") as f:
                first = f.readline()
            m = re.match(rb"pushtrail-server: listening on http://127\.0\.0\.1:(\d+) ", first)
            if m and first.endswith(b"\n"):
                self.port = int(m.group(1))
            elif self.p.poll() is not None or time.monotonic() > deadline:
                if self.p.poll() is None:
                    self.p.kill()
                    self.p.wait()
                die("pushtrail-server did not start (exit %s): %s" % (self.p.returncode, self.log_tail()))
            else:
                time.sleep(0.02)

    def log_tail(self):
        with open(self.logpath, "rb") as f:
            return f.read()[-2000:].decode("utf-8", "replace").strip()

    def status(self):
        """(RssAnon kB, threads) of the server now."""
        anon = threads = None
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
        return anon, threads

    def cpu(self):
        """The server's CPU time so far, user+sys, in seconds."""
        with open("/proc/%d/stat" % self.pid) as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, crashed_ok=False):
        """SIGTERM, as a supervisor stops it; a graceful stop exits 0. Returns None, or with
        crashed_ok the signal that ended a server already gone by itself."""
        if crashed_ok and self.p.poll() is not None and self.p.returncode < 0:
            self.logf.close()
            return -self.p.returncode
        self.p.terminate()
        try:
            rc = self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self.logf.close()
        if rc != 0:
            die("pushtrail-server exited %d on SIGTERM: %s" % (rc, self.log_tail()))
        return None


class MemSampler(threading.Thread):
    """Samples a server's RssAnon and thread count every `period` s, and once more when
    stopped (a load shorter than the period has two samples): [t, kB, threads, tag()]."""

    def __init__(self, server, period=0.5, tag=None):
        super().__init__(daemon=True)
        self.server, self.period, self.tag = server, period, tag
        self.stop = threading.Event()
        self.samples = []
        self.t0 = time.perf_counter()

    def sample(self):
        try:
            anon, threads = self.server.status()
        except (OSError, ValueError):  # the server is gone: its caller finds out
            return False
        if anon is None:  # a zombie has no memory lines
            return False
        s = [round(time.perf_counter() - self.t0, 2), anon, threads]
        if self.tag is not None:
            s.append(self.tag())
        self.samples.append(s)
        return True

    def run(self):
        while self.sample() and not self.stop.wait(self.period):
            pass

    def finish(self):
        self.stop.set()
        self.join()
        self.sample()
        return self.samples


def busy_cpu():
    """CPU seconds the whole machine has spent busy so far (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def wrk_summary(outp, failed, srv):
    """The summary wrk-paths.lua printed into `outp`; stops the bench when there is none,
    or when wrk counted an answer of 400 or more (`failed` says what they were)."""
    with open(outp) as f:
        lines = [l for l in f.read().split("\n") if l.startswith("PTBENCH ")]
    if not lines:
        die("wrk printed no summary (see %s)" % outp)
    w = json.loads(lines[-1][len("PTBENCH "):])
    if w["errors"]["status"]:
        die("%d of %d %s (see %s)" % (w["errors"]["status"], w["requests"], failed, srv.logpath))
    return w


def http_get(port, path, token):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        c.request("GET", path, headers={"Authorization": "Bearer " + token})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def poster(port, token, bodies, lock, cursor, results, failures, expect="appended"):
    """One keep-alive client: POSTs the next body not yet taken until none is left; each
    answer adds (perf_counter time, events appended) to results. Every line of a body must
    come back as `expect` (appended, or duplicates for bodies sent again)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/x-ndjson"}
    try:
        while True:
            with lock:
                i = cursor[0]
                cursor[0] += 1
            if i >= len(bodies):
                return
            body, lines = bodies[i]
            c.request("POST", "/v1/events", body=body, headers=headers)
            r = c.getresponse()
            data = r.read()
            if r.status != 200:
                failures.append("body %d: HTTP %d %s" % (i, r.status, data[:300].decode("utf-8", "replace")))
                return
            s = json.loads(data)
            if s.get(expect) != lines:
                failures.append("body %d: %d lines, answer %s" % (i, lines, data[:300].decode("utf-8", "replace")))
                return
            with lock:
                results.append((time.perf_counter(), s["appended"]))
    except (OSError, http.client.HTTPException, ValueError) as e:
        failures.append("%s: %s" % (type(e).__name__, e))
    finally:
        c.close()


# ---------------------------------------------------------------- the benchmark

class Bench:
    def __init__(self, a):
        self.a = a
        self.work = a.workdir
        self.pt = a.pushtrail
        self.gen = a.gen
        self.server_exe = getattr(a, "server", None)
        self.py = sys.executable
        self.n = a.events
        # A stream with Android users gets its own file, store and result names, so that it
        # and the iOS-only stream of the same size do not overwrite each other.
        self.share = getattr(a, "android_share", 0.0)
        self.suffix = "-android%s" % self.share if self.share else ""
        self.res = {
            "events": self.n,
            "seed": 42,
            "command": a.command,
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "settings": {"ingest_reps": a.ingest_reps, "verify_reps": verify_reps(a.ingest_reps, a.events), "query_reps": a.query_reps,
                         "jq_reps": a.jq_reps, "skip": sorted(a.skip),
                         "server_seconds": getattr(a, "server_seconds", None)},
            "phases_s": {},
        }
        if self.share:
            self.res["android_share"] = self.share
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHTRAIL_")}
        self.env["NO_COLOR"] = "1"
        self.env["LC_ALL"] = "C.UTF-8"

    def path(self, *p):
        return os.path.join(self.work, *p)

    def phase(self, name, t0):
        self.res["phases_s"][name] = round(time.perf_counter() - t0, 2)

    # -- machine ---------------------------------------------------------------
    def machine(self):
        cpu = "?"
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        cpu = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        mem = "?"
        try:
            with open("/proc/meminfo") as f:
                for line in f:
                    if line.startswith("MemTotal:"):
                        mem = "%.1f GiB" % (int(line.split()[1]) / 1024 / 1024)
        except OSError:
            pass
        osname = "?"
        try:
            with open("/etc/os-release") as f:
                for line in f:
                    if line.startswith("PRETTY_NAME="):
                        osname = line.split("=", 1)[1].strip().strip('"')
        except OSError:
            pass
        git = first_line(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "Sources", "Package.swift"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
        lmdb = first_line(["dpkg-query", "-W", "-f", "${Version}", "lmdb-utils"])
        self.res["machine"] = {
            "nproc": len(os.sched_getaffinity(0)),
            "cpu": cpu,
            "memory": mem,
            "kernel": platform.release(),
            "os": osname,
            "swift": first_line(["swift", "--version"]),
            "sqlite3": first_line(["sqlite3", "--version"]).split(" ")[0],
            "jq": first_line(["jq", "--version"]),
            "lmdb": "lmdb-utils " + lmdb + " (" + first_line(["mdb_load", "-V"]) + ")",
            "python3": platform.python_version(),
            "git": git + (" + uncommitted changes in Sources/" if dirty else ""),
            "fdatasync_ms": self.fdatasync_probe(),
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
        self.ndjson = self.path("events%s.ndjson" % self.suffix)
        share = ["--android-share", str(self.share)] if self.share else []
        log("generating %s events (pushtrail-gen --events %d --seed 42%s)…" % (
            fmt_int(self.n), self.n, "".join(" " + x for x in share)))
        r = run([self.gen, "--events", str(self.n), "--seed", "42"] + share + ["-o", self.ndjson],
                what="pushtrail-gen")
        self.res["input"] = {"bytes": os.path.getsize(self.ndjson), "gen_s": round(r.wall, 2)}
        self.phase("generate", t0)

        t0 = time.perf_counter()
        log("choosing the query targets%s (outside the timings)…" %
            ("" if "mdb_load" in self.a.skip else " and writing mdb_load's input"))
        tg = self.path("targets.json")
        cmd = [self.py, os.path.join(HERE, "prep.py"), self.ndjson, tg]
        self.mdbin = self.path("events.mdbload")
        if "mdb_load" not in self.a.skip:
            cmd += ["--mdb-load", self.mdbin]
        run(cmd, what="prep.py")
        with open(tg) as f:
            self.t = json.load(f)
        self.res["input"]["lines"] = self.t["lines"]
        self.res["chosen"] = {k: self.t[k] for k in ("thread", "thread_events", "task", "task_events",
                                                      "user", "user_events", "users", "threads", "tasks")}
        log("thread %s (%d events), task %d (%d events), user %s (%d events)" % (
            self.t["thread"], self.t["thread_events"], self.t["task"], self.t["task_events"],
            self.t["user"], self.t["user_events"]))
        self.sqlite_script()
        self.phase("prepare", t0)

    def sqlite_script(self):
        if any(c in self.ndjson for c in '"\\\n'):
            die("the work dir path may not contain '\"', '\\' or a newline (sqlite3 .import)")
        self.sqlload = self.path("load.sql")
        with open(self.sqlload, "w") as f:
            f.write("""\
CREATE TABLE events(
  seq INTEGER PRIMARY KEY,   -- rowid: 1, 2, 3 … in line order
  id TEXT NOT NULL, type TEXT NOT NULL, at TEXT NOT NULL, user TEXT NOT NULL,
  thread TEXT, task INTEGER, notification_id TEXT, line TEXT NOT NULL);
CREATE INDEX events_thread ON events(thread);
CREATE INDEX events_task ON events(task);
CREATE INDEX events_user ON events(user);
CREATE INDEX events_notification_id ON events(notification_id);
CREATE TEMP TABLE raw(line TEXT);
.mode ascii
.separator "\x1f" "\\n"
.import --schema temp "%s" raw
BEGIN;
INSERT INTO events(seq, id, type, at, user, thread, task, notification_id, line)
SELECT rowid, line->>'$.id', line->>'$.type', line->>'$.at', line->>'$.user',
       coalesce(line->>'$.payload.aps.thread-id', line->>'$.payload.android.data.thread_id',
                line->>'$.payload.data.thread_id', line->>'$.thread_id'),
       coalesce(line->>'$.payload.task_id', CAST(line->>'$.payload.android.data.task_id' AS INTEGER),
                CAST(line->>'$.payload.data.task_id' AS INTEGER), line->>'$.task_id'),
       line->>'$.notification_id', line
FROM temp.raw ORDER BY rowid;
COMMIT;
""" % self.ndjson)

    # -- ingest ----------------------------------------------------------------
    def ingest(self):
        t0 = time.perf_counter()
        R = self.a.ingest_reps
        systems = ["pushtrail"] + [s for s in ("sqlite3", "mdb_load", "lmdb_floor") if s not in self.a.skip]
        runs = {s: [] for s in systems}
        self.store = self.path("store%s" % self.suffix)
        self.sqldb = self.path("sqlite.db")
        mdbdir, floordir = self.path("mdbload"), self.path("floor")
        sizes = {}
        for rep in range(R):
            for s in systems:
                log("ingest %d/%d: %s…" % (rep + 1, R, s))
                if s == "pushtrail":
                    rm(self.store)
                    os.sync()
                    r = run([self.pt, "--store", self.store, "ingest", "-q", self.ndjson],
                            rss=True, env=self.env, what="pushtrail ingest")
                elif s == "sqlite3":
                    rm(self.sqldb)
                    os.sync()
                    with open(self.sqlload, "rb") as sql:
                        r = run(["sqlite3", "-init", "/dev/null", "-bail", self.sqldb], stdin=sql, rss=True,
                                what="sqlite3 load")
                elif s == "mdb_load":
                    rm(mdbdir)
                    os.mkdir(mdbdir)
                    os.sync()
                    r = run(["mdb_load", "-f", self.mdbin, mdbdir], rss=True, what="mdb_load")
                else:
                    rm(floordir)
                    os.sync()
                    r = run([self.py, os.path.join(HERE, "lmdb_floor.py"), self.ndjson, floordir],
                            rss=True, what="lmdb_floor.py")
                runs[s].append(r)
                log("  %.2f s wall, %.2f s CPU, max RSS %s kB, RssAnon peak %s kB, %.0f MB written" % (
                    r.wall, r.cpu, r.maxrss_kb, r.anon_kb, (r.written or 0) / MB))
        sizes["ndjson"] = os.path.getsize(self.ndjson)
        sizes["pushtrail_data_mdb"] = os.path.getsize(os.path.join(self.store, "data.mdb"))
        if "sqlite3" in runs:
            sizes["sqlite_db"] = os.path.getsize(self.sqldb)
        if "mdb_load" in runs:
            sizes["mdb_load_data_mdb"] = os.path.getsize(os.path.join(mdbdir, "data.mdb"))
            rm(mdbdir)
            rm(self.mdbin)
        if "lmdb_floor" in runs:
            sizes["lmdb_floor_data_mdb"] = os.path.getsize(os.path.join(floordir, "data.mdb"))
            rm(floordir)
        self.res["sizes"] = sizes
        self.res["ingest"] = {s: {
            "wall_s": [round(r.wall, 4) for r in rs],
            "cpu_s": [round(r.cpu, 3) for r in rs],
            "maxrss_kb": [r.maxrss_kb for r in rs],
            "rss_anon_peak_kb": [r.anon_kb for r in rs],
            "rss_file_peak_kb": [r.file_kb for r in rs],
            "written_bytes": [r.written for r in rs],
        } for s, rs in runs.items()}
        # The store holds every line?
        head = json.loads(output([self.pt, "--store", self.store, "head", "--json"]))
        if head.get("seq") != self.t["lines"]:
            die("the pushtrail store holds %s events, the input %d lines" % (head.get("seq"), self.t["lines"]))
        if "sqlite3" in runs:
            c = int(output(["sqlite3", "-init", "/dev/null", "-readonly", self.sqldb,
                            "SELECT count(*) FROM events"]).strip())
            if c != self.t["lines"]:
                die("the sqlite3 table holds %d rows, the input %d lines" % (c, self.t["lines"]))
        self.phase("ingest", t0)

    # -- queries ---------------------------------------------------------------
    def queries(self):
        t0 = time.perf_counter()
        t = self.t
        th, task, user = t["thread"], t["task"], t["user"]
        S = ["--store", self.store]
        notif_ids = "(SELECT id FROM events WHERE thread = %s AND type = 'notification')" % sql_str(th)
        q = [
            ("thread", [self.pt] + S + ["thread", th],
             "SELECT line FROM events WHERE thread = %s OR notification_id IN %s ORDER BY at, seq;"
             % (sql_str(th), notif_ids)),
            ("task", [self.pt] + S + ["task", str(task)],
             "SELECT line FROM events WHERE task = %d ORDER BY at, seq;" % task),
            ("export", [self.pt] + S + ["export", "--thread", th, "-o", "-"],
             "SELECT line->'$.payload' FROM events WHERE thread = %s AND type = 'notification' "
             "ORDER BY at DESC, seq DESC LIMIT 1;" % sql_str(th)),
            ("user", [self.pt] + S + ["log", "--user", user],
             "SELECT line FROM events WHERE user = %s ORDER BY at, seq;" % sql_str(user)),
            # Support's first question: the user's last 100 pushes, oldest first, as JSON.
            ("user_recent", [self.pt] + S + ["log", "--user", user, "--json", "-n", "100"],
             "SELECT seq, line FROM (SELECT seq, at, line FROM events WHERE user = %s "
             "ORDER BY at DESC, seq DESC LIMIT 100) ORDER BY at, seq;" % sql_str(user)),
            ("startup", [self.pt] + S + ["head"],
             "SELECT seq FROM events ORDER BY seq DESC LIMIT 1;"),
        ]
        self.sql = {name: sql for name, _, sql in q}
        self.ptcmd = {name: cmd for name, cmd, _ in q}
        sqlite = "sqlite3" not in self.a.skip
        sqlcmd = lambda s: ["sqlite3", "-init", "/dev/null", "-readonly", self.sqldb, s]
        R = self.a.query_reps
        times = {name: {"pushtrail": [], "sqlite3": []} for name, _, _ in q}
        log("queries: 2 warm-up runs each, then %d timed runs each (fresh processes)…" % R)
        for _ in range(2):
            for name, cmd, sql in q:
                run(cmd, env=self.env, what="pushtrail " + name)
                if sqlite:
                    run(sqlcmd(sql), what="sqlite3 " + name)
        for rep in range(R):
            for name, cmd, sql in q:
                order = ["pushtrail", "sqlite3"] if rep % 2 == 0 else ["sqlite3", "pushtrail"]
                for who in order:
                    if who == "pushtrail":
                        times[name]["pushtrail"].append(run(cmd, env=self.env, what="pushtrail " + name).wall)
                    elif sqlite:
                        times[name]["sqlite3"].append(run(sqlcmd(sql), what="sqlite3 " + name).wall)
        self.res["queries"] = {name: {k: [round(x, 6) for x in v] for k, v in d.items()}
                               for name, d in times.items()}
        self.phase("queries", t0)
        self.jq()
        self.check()

    def jq_scripts(self):
        t = self.t
        f = shlex.quote(self.ndjson)
        srt = "jq -c -s 'sort_by(.at)[]'"
        thread_sel = ('.type=="notification" and ((.payload.aps["thread-id"]? // .payload.android.data.thread_id?'
                      ' // .payload.data.thread_id?) == $t)')
        return {
            # two passes: the thread's notification ids, then the members, ordered by at
            "thread": (
                "ids=$(jq -c --arg t \"$1\" 'select(%s) | {(.id): true}' %s | jq -c -s 'add // {}')\n"
                "jq -c --arg t \"$1\" --argjson ids \"$ids\" 'select((%s) or (.type==\"action\" and .thread_id==$t)"
                " or (.notification_id | strings | $ids[.]))' %s | %s"
                % (thread_sel, f, thread_sel, f, srt), [t["thread"]]),
            "task": (
                "jq -c --argjson n \"$1\" 'select((.type==\"notification\" and ((.payload.task_id? //"
                " (.payload.android.data.task_id? // .payload.data.task_id? | tonumber?)) == $n))"
                " or (.type==\"action\" and .task_id==$n))' %s | %s" % (f, srt),
                [str(t["task"])]),
            "export": (
                "jq -c --arg t \"$1\" 'select(%s) | [.at, .payload]' %s | jq -c -s 'sort_by(.[0]) | last | .[1]'"
                % (thread_sel, f), [t["thread"]]),
            "user": (
                "jq -c --arg u \"$1\" 'select(.user==$u)' %s | %s" % (f, srt), [t["user"]]),
        }

    def jq(self):
        if self.a.jq_reps == 0 or "jq" in self.a.skip:
            return
        t0 = time.perf_counter()
        self.jqout = {}
        for name, (script, args) in self.jq_scripts().items():
            xs = []
            for rep in range(self.a.jq_reps):
                log("jq full scan %d/%d: %s…" % (rep + 1, self.a.jq_reps, name))
                out = self.path("jq-%s.out" % name)
                with open(out, "wb") as o:
                    r = run(["bash", "-o", "pipefail", "-c", script, "jq-" + name] + args, stdout=o,
                            what="jq " + name)
                xs.append(round(r.wall, 4))
                log("  %.2f s" % r.wall)
                self.jqout[name] = out
            self.res["queries"][name]["jq"] = xs
        self.phase("jq", t0)

    def check(self):
        """Untimed: do pushtrail, sqlite3 and jq select the same events?"""
        t = self.t
        checks = {}
        sqlite = "sqlite3" not in self.a.skip
        jq = getattr(self, "jqout", {})

        def sqlrows(name):
            return output(["sqlite3", "-init", "/dev/null", "-readonly", self.sqldb, self.sql[name]]).decode().splitlines()

        def jqrows(name):
            with open(jq[name], "rb") as f:
                return f.read().decode().splitlines()

        def pt_json(args):
            return json.loads(output([self.pt, "--store", self.store] + args, ok=(0,)))

        for name, expected, got_pt in (
                ("thread", t["thread_events"], lambda: len(pt_json(["thread", t["thread"], "--json"])["events"])),
                ("task", t["task_events"], lambda: len(pt_json(["task", str(t["task"]), "--json"])["history"])),
                ("user", t["user_events"],
                 lambda: len(output([self.pt, "--store", self.store, "log", "--user", t["user"], "--raw"]).splitlines()))):
            c = {"expected": expected, "pushtrail": got_pt()}
            if sqlite:
                c["sqlite3"] = len(sqlrows(name))
            if name in jq:
                c["jq"] = len(jqrows(name))
            c["ok"] = all(v == expected for k, v in c.items() if k != "expected")
            checks[name] = c
        exp = json.loads(output(self.ptcmd["export"][:1] + self.ptcmd["export"][1:]))
        exp.pop("Simulator Target Bundle", None)
        c = {"pushtrail_keys": len(exp)}
        ok = True
        if sqlite:
            ok &= json.loads(sqlrows("export")[0]) == exp
        if "export" in jq:
            ok &= json.loads(jqrows("export")[0]) == exp
        c["ok"] = bool(ok)
        checks["export"] = c
        self.res["checks"] = checks
        for name, c in checks.items():
            if not c["ok"]:
                log("WARNING: the %s selections differ: %s" % (name, c))

    # -- verify, audit ---------------------------------------------------------
    def verify_audit(self):
        t0 = time.perf_counter()
        R = self.a.ingest_reps
        # verify takes about a second and both cores: a few more runs steady its median
        # on a shared machine at little cost. A first run comes before them and is
        # reported on its own: at 10M the sqlite3 load has pushed much of the store out
        # of the page cache by now, and that run measures the disk (~200 MB/s of store
        # here) more than verify. It also reads the store back in for the timed runs.
        V = verify_reps(R, self.a.events)
        log("verify, first run…")
        first = run([self.pt, "--store", self.store, "verify"], env=self.env, what="pushtrail verify", rss=True)
        log("  %.2f s" % first.wall)
        v, au = [], []
        for rep in range(V):
            log("verify %d/%d…" % (rep + 1, V))
            v.append(run([self.pt, "--store", self.store, "verify"], env=self.env, what="pushtrail verify", rss=True))
            log("  %.2f s" % v[-1].wall)
        for rep in range(R):
            log("audit %d/%d…" % (rep + 1, R))
            au.append(run([self.pt, "--store", self.store, "audit"], env=self.env, ok=(0, 1),
                          what="pushtrail audit", rss=True))
            log("  %.2f s" % au[-1].wall)
        self.res["verify"] = {"first_wall_s": round(first.wall, 4), "first_cpu_s": round(first.cpu, 3),
                              "wall_s": [round(r.wall, 4) for r in v], "cpu_s": [round(r.cpu, 3) for r in v],
                              "maxrss_kb": [r.maxrss_kb for r in v], "rss_anon_peak_kb": [r.anon_kb for r in v]}
        self.res["audit"] = {"wall_s": [round(r.wall, 4) for r in au], "cpu_s": [round(r.cpu, 3) for r in au],
                             "maxrss_kb": [r.maxrss_kb for r in au], "rss_anon_peak_kb": [r.anon_kb for r in au],
                             "exit": [r.rc for r in au]}
        self.phase("verify_audit", t0)

    # -- server ----------------------------------------------------------------
    def server(self):
        """pushtrail-server on the bench's store: GET answers under wrk (32 keep-alive clients)
        against the CLI asking the same questions one process each; then POST appends of the
        whole input into fresh stores; the server's anonymous memory throughout."""
        if "server" in self.a.skip:
            return
        t0 = time.perf_counter()
        # The load average counts the server's busy threads: it would say nothing of other
        # work from here on. The load at the start is kept, and the CPU time others used
        # during each load is measured instead (/proc/stat less the server and the client).
        loads = len(LOADS)
        self.res["server"] = {"loadavg_1min_start": loadavg(), "seconds": self.a.server_seconds,
                              "rounds": SERVER_ROUNDS,
                              "wrk": "wrk -t 2 -c 32 -d %ds --latency -s Scripts/bench/wrk-paths.lua"
                                     % self.a.server_seconds}
        self.server_queries()
        self.server_cli()
        self.phase("server_queries", t0)
        t0 = time.perf_counter()
        self.server_pages()
        self.phase("server_pages", t0)
        t0 = time.perf_counter()
        self.server_appends()
        self.phase("server_appends", t0)
        del LOADS[loads:]

    def token(self, store, name, role):
        secret = output([self.pt, "--store", store, "token", "add", name, "--role", role]).decode().strip()
        if not secret.startswith("pt_"):
            die("token add printed no secret")
        return secret

    def server_paths(self):
        routes = {"tasks": ["/v1/tasks/%d" % x for x in self.t["sample_tasks"]],
                  "threads": ["/v1/threads/" + urllib.parse.quote(x, safe="") for x in self.t["sample_threads"]]}
        files = {}
        for name, paths in routes.items():
            files[name] = self.path("paths-%s.txt" % name)
            with open(files[name], "w") as f:
                f.write("".join(p + "\n" for p in paths))
        return routes, files

    def server_queries(self):
        sv = self.res["server"]
        routes, files = self.server_paths()
        secret = self.token(self.store, "bench-read", "read")
        log("server: pushtrail-server on the store, %d task and %d thread ids…" % (
            len(routes["tasks"]), len(routes["threads"])))
        srv = Server(self.server_exe, self.store, self.path("server-queries.log"), self.env)
        before, _ = srv.status()
        # Untimed: the answers are the CLI's --json, byte for byte, for a task and a thread.
        check = {}
        for name, path, args in (("tasks", routes["tasks"][0], ["task", str(self.t["sample_tasks"][0])]),
                                 ("threads", routes["threads"][0], ["thread", self.t["sample_threads"][0]])):
            status, body = http_get(srv.port, path, secret)
            check[name] = status == 200 and body == output([self.pt, "--store", self.store] + args + ["--json"])
        check["ok"] = all(check.values())
        self.res.setdefault("checks", {})["server"] = check
        if not check["ok"]:
            log("WARNING: the server's answers differ from the CLI's --json: %s" % check)
        lua = os.path.join(HERE, "wrk-paths.lua")
        q = {name: {k: [] for k in ("rps", "requests", "p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms",
                                    "socket_errors", "server_cpu_s", "wrk_cpu_s", "other_cpu_s", "anon_peak_kb",
                                    "threads_peak")}
             for name in routes}
        round_peaks, samples = [], []
        clock = time.perf_counter()
        for rnd in range(SERVER_ROUNDS):
            peak = 0
            for name in routes:
                log("server %s, round %d/%d: wrk -t 2 -c 32 for %d s…" % (
                    name, rnd + 1, SERVER_ROUNDS, self.a.server_seconds))
                env = dict(self.env, PT_BENCH_PATHS=files[name], PT_BENCH_TOKEN=secret)
                outp = self.path("wrk-%s.out" % name)
                sampler = MemSampler(srv)
                c0, b0 = srv.cpu(), busy_cpu()
                sampler.start()
                with open(outp, "wb") as o:
                    r = run(["wrk", "-t", "2", "-c", "32", "-d", "%ds" % self.a.server_seconds, "--latency",
                             "-s", lua, "http://127.0.0.1:%d" % srv.port], stdout=o, env=env, what="wrk")
                got = sampler.finish()
                cpu = srv.cpu() - c0
                other = busy_cpu() - b0 - cpu - r.cpu
                w = wrk_summary(outp, "%s answers were not 2xx" % name, srv)
                d, lat = q[name], w["latency_us"]
                d["rps"].append(round(w["requests"] / (w["duration_us"] / 1e6), 1))
                d["requests"].append(w["requests"])
                for k in ("p50", "p90", "p99", "max", "mean"):
                    d[k + "_ms"].append(round(lat[k] / 1000, 3))
                d["socket_errors"].append(sum(v for k, v in w["errors"].items() if k != "status"))
                d["server_cpu_s"].append(round(cpu, 2))
                d["wrk_cpu_s"].append(round(r.cpu, 2))
                d["other_cpu_s"].append(round(max(other, 0), 2))
                d["anon_peak_kb"].append(max(s[1] for s in got))
                d["threads_peak"].append(max(s[2] for s in got))
                off = round(sampler.t0 - clock, 2)
                samples += [[round(s[0] + off, 2), s[1], s[2], name] for s in got]
                peak = max(peak, d["anon_peak_kb"][-1])
                log("  %s req/s, p50 %.2f ms, p99 %.2f ms; CPU: server %.1f s, wrk %.1f s, others %.1f s; "
                    "RssAnon peak %d kB, %d threads" % (fmt_int(d["rps"][-1]), d["p50_ms"][-1], d["p99_ms"][-1],
                                                         cpu, r.cpu, other, d["anon_peak_kb"][-1],
                                                         d["threads_peak"][-1]))
            round_peaks.append(peak)
        time.sleep(1)
        after, _ = srv.status()
        srv.stop()
        sv["paths"] = {name: len(p) for name, p in routes.items()}
        sv["queries"] = q
        sv["query_memory"] = {"before_kb": before, "peak_kb": max(round_peaks), "after_kb": after,
                              "round_peaks_kb": round_peaks, "samples": samples}

    def server_pages(self):
        """The support site's pages under wrk with 8 keep-alive clients, a kind of page at a
        time: a user's, a thread's, a task's and an event's page, a search that redirects,
        and a user's audit, each over the sample ids; the search page, the audit's form
        and the live tail."""
        sv = self.res["server"]
        q = urllib.parse.quote
        users = self.t.get("sample_users") or [self.t["user"]]
        kinds = {
            "user": ["/users/" + q(u, safe="") for u in users],
            "thread": ["/threads/" + q(x, safe="") for x in self.t["sample_threads"]],
            "task": ["/tasks/%d" % x for x in self.t["sample_tasks"]],
            "event": ["/events/" + q(x, safe="") for x in self.t.get("sample_notifications") or []],
            "search": ["/search?q=" + q(u, safe="") for u in users],
            "audit": ["/audit?user=" + q(u, safe="") for u in users],
            "home": ["/"],
            "audit-form": ["/audit"],
            "live": ["/live"],
        }
        kinds = {k: v for k, v in kinds.items() if v}
        secret = self.token(self.store, "bench-pages", "read")
        srv = Server(self.server_exe, self.store, self.path("server-pages.log"), self.env)
        lua = os.path.join(HERE, "wrk-paths.lua")
        pages = {}
        for name, paths in kinds.items():
            status, body = http_get(srv.port, paths[0], secret)
            if status not in (200, 303) or (status == 200 and b"</html>" not in body):
                die("the %s page %s answered %d (see %s)" % (name, paths[0], status, srv.logpath))
            listing = self.path("pages-%s.txt" % name)
            with open(listing, "w") as f:
                f.write("".join(p + "\n" for p in paths))
            log("server pages: %s, wrk -t 2 -c 8 for %d s over %d paths…" % (name, self.a.server_seconds, len(paths)))
            env = dict(self.env, PT_BENCH_PATHS=listing, PT_BENCH_TOKEN=secret)
            outp = self.path("wrk-page-%s.out" % name)
            sampler = MemSampler(srv)
            sampler.start()
            with open(outp, "wb") as o:
                run(["wrk", "-t", "2", "-c", "8", "-d", "%ds" % self.a.server_seconds, "--latency", "-s", lua,
                     "http://127.0.0.1:%d" % srv.port], stdout=o, env=env, what="wrk")
            got = sampler.finish()
            w = wrk_summary(outp, "%s pages were not 2xx or 3xx" % name, srv)
            lat = w["latency_us"]
            pages[name] = {"paths": len(paths), "requests": w["requests"],
                           "rps": round(w["requests"] / (w["duration_us"] / 1e6), 1),
                           "p50_ms": round(lat["p50"] / 1000, 3), "p99_ms": round(lat["p99"] / 1000, 3),
                           "max_ms": round(lat["max"] / 1000, 3), "bytes_per_page": w["bytes"] // max(w["requests"], 1),
                           "anon_peak_kb": max(s[1] for s in got)}
            log("  %s req/s, p50 %.2f ms, p99 %.2f ms, %s bytes a page" % (
                fmt_int(pages[name]["rps"]), pages[name]["p50_ms"], pages[name]["p99_ms"],
                fmt_int(pages[name]["bytes_per_page"])))
        srv.stop()
        sv["pages"] = pages

    def server_cli(self):
        """The same questions asked of the CLI, a process each: in sequence, then two at a time."""
        sv = self.res["server"]
        out = {}
        for name, sub, ids in (("tasks", "task", [str(x) for x in self.t["sample_tasks"]]),
                               ("threads", "thread", self.t["sample_threads"])):
            cmds = [[self.pt, "--store", self.store, sub, ids[i % len(ids)], "--json"] for i in range(CLI_RUNS)]
            failed = []

            def ask(part):
                for c in part:
                    if subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      env=self.env).returncode != 0:
                        failed.append(c)

            log("CLI: %d × `%s ID --json` in sequence, then two at a time…" % (CLI_RUNS, sub))
            t0 = time.perf_counter()
            ask(cmds)
            seq = time.perf_counter() - t0
            t0 = time.perf_counter()
            ts = [threading.Thread(target=ask, args=(cmds[k::2],)) for k in range(2)]
            for th in ts:
                th.start()
            for th in ts:
                th.join()
            par = time.perf_counter() - t0
            if failed:
                die("%d CLI runs failed, e.g. %s" % (len(failed), " ".join(failed[0])))
            out[name] = {"runs": CLI_RUNS, "sequential_s": round(seq, 3), "sequential_qps": round(CLI_RUNS / seq, 1),
                         "parallel2_s": round(par, 3), "parallel2_qps": round(CLI_RUNS / par, 1)}
            log("  %.0f questions/s in sequence, %.0f two at a time" % (CLI_RUNS / seq, CLI_RUNS / par))
        sv["cli"] = out

    def server_bodies(self):
        """The input as POST bodies of 10,000 lines (fewer when that makes fewer than 100 bodies)."""
        per = max(1, min(10000, -(-self.t["lines"] // 100)))
        bodies, chunk = [], []
        with open(self.ndjson, "rb") as f:
            for line in f:
                if not line.strip():
                    continue
                chunk.append(line if line.endswith(b"\n") else line + b"\n")
                if len(chunk) == per:
                    bodies.append((b"".join(chunk), per))
                    chunk = []
        if chunk:
            bodies.append((b"".join(chunk), len(chunk)))
        return bodies, per

    def server_appends(self):
        """Each client count in turn, repeated: a fresh store and server, the bodies POSTed
        by that many keep-alive clients, then a graceful stop, `head` and `verify`. A server
        that dies under the load is recorded (its signal, the bodies answered before), its
        store checked all the same: every answered body must be in it."""
        sv = self.res["server"]
        bodies, per = self.server_bodies()
        R = self.a.ingest_reps
        store = self.path("served")
        keys = ("wall_s", "events_per_s", "server_cpu_s", "client_cpu_s", "other_cpu_s", "anon_before_kb",
                "anon_peak_kb", "anon_after_kb", "threads_peak", "first_half_peak_kb", "second_half_peak_kb",
                "store_bytes", "store_format")
        runs = {str(c): {k: [] for k in keys} for c in APPEND_CLIENTS}
        for rep in range(R):
            for clients in APPEND_CLIENTS:
                log("server append %d/%d: %d bodies of %s lines, %d client(s)…" % (
                    rep + 1, R, len(bodies), fmt_int(per), clients))
                rm(store)
                output([self.pt, "--store", store, "ingest", "-q", "/dev/null"])
                secret = self.token(store, "bench-ingest", "ingest")
                os.sync()
                srv = Server(self.server_exe, store, self.path("server-appends.log"), self.env)
                before, _ = srv.status()
                lock, cursor, results, failures = threading.Lock(), [0], [], []
                sampler = MemSampler(srv, tag=lambda: len(results))
                c0, b0, p0 = srv.cpu(), busy_cpu(), os.times()
                sampler.start()
                t0 = time.perf_counter()
                ts = [threading.Thread(target=poster, args=(srv.port, secret, bodies, lock, cursor, results,
                                                            failures)) for _ in range(clients)]
                for th in ts:
                    th.start()
                for th in ts:
                    th.join()
                wall = time.perf_counter() - t0
                got = sampler.finish()
                alive = srv.p.poll() is None
                cpu = srv.cpu() - c0 if alive else None
                p1 = os.times()
                mine = (p1.user + p1.system) - (p0.user + p0.system)
                other = busy_cpu() - b0 - (cpu or 0) - mine
                after = repeat = None
                if alive:
                    time.sleep(0.5)
                    after, _ = srv.status()
                if alive and not failures and clients == 1 and rep == R - 1:
                    repeat = self.server_repeat(srv, secret, bodies)
                signal = srv.stop(crashed_ok=True)
                if failures and signal is None:
                    die("server append: %s" % failures[0])
                acked = sorted(t - t0 for t, _ in results)
                acked_events = sum(n for _, n in results)
                d = runs[str(clients)]
                stats = json.loads(output([self.pt, "--store", store, "stats", "--json"]))
                v = run([self.pt, "--store", store, "verify"], env=self.env, what="pushtrail verify (served store)")
                if signal is not None:
                    # Every answered body is durable: the store holds at least those events.
                    if stats["events"] < acked_events:
                        die("the served store holds %d events, but %d were acknowledged before the crash" % (
                            stats["events"], acked_events))
                    crash = {"signal": signal, "bodies_answered": len(acked), "events_answered": acked_events,
                             "store_events": stats["events"], "verify_s": round(v.wall, 2),
                             "anon_peak_kb": max([x[1] for x in got if x[1] is not None] or [0]),
                             "answered_s": round(acked[-1], 4) if acked else None,
                             "log": srv.log_tail()[-600:]}
                    d.setdefault("crashes", []).append(crash)
                    d.setdefault("acked_s", []).append([round(x, 4) for x in acked])
                    log("  the server died (signal %d) after %d of %d bodies (%.2f s); its store holds %s events, "
                        "verify ok" % (signal, len(acked), len(bodies), acked[-1] if acked else 0,
                                       fmt_int(stats["events"])))
                    rm(store)
                    continue
                if stats["events"] != self.t["lines"]:
                    die("the served store holds %s events, the input %d lines" % (stats["events"], self.t["lines"]))
                d["wall_s"].append(round(wall, 4))
                d["events_per_s"].append(round(self.t["lines"] / wall, 1))
                d["server_cpu_s"].append(round(cpu, 2))
                d["client_cpu_s"].append(round(mine, 2))
                d["other_cpu_s"].append(round(max(other, 0), 2))
                d["anon_before_kb"].append(before)
                d["anon_peak_kb"].append(max(s[1] for s in got))
                d["anon_after_kb"].append(after)
                d["threads_peak"].append(max(s[2] for s in got))
                half = len(bodies) // 2
                # Samples once the first answer is in, up to half the bodies, against those after.
                d["first_half_peak_kb"].append(max([s[1] for s in got if 0 < s[3] < half] or [None]))
                d["second_half_peak_kb"].append(max([s[1] for s in got if s[3] >= half] or [None]))
                d["store_bytes"].append(stats["store_bytes"])
                d["store_format"].append(stats["format"])
                d.setdefault("acked_s", []).append([round(x, 4) for x in acked])
                d["samples"] = got  # the last run's
                if repeat:
                    d["repeat"] = repeat
                log("  %.2f s, %s events/s; CPU: server %.1f s, clients %.1f s, others %.1f s; "
                    "RssAnon %d → peak %d → %d kB; store %s (format %d); verify ok" % (
                        wall, fmt_int(self.t["lines"] / wall), cpu, mine, other, before, d["anon_peak_kb"][-1],
                        after, fmt_mb(stats["store_bytes"]), stats["format"]))
                rm(store)
        sv["appends"] = {"lines_per_body": per, "bodies": len(bodies), "runs": runs}

    def server_repeat(self, srv, secret, bodies):
        """The same bodies sent once more to the server that has just stored them: all
        duplicates, so the store does not change and the memory should not either. Its
        memory grows during the first pass with the store (a body's transaction touches
        more pages of larger trees); against that, this pass shows whether it grows with
        the number of requests."""
        log("  the same %d bodies again (duplicates: the store stays as it is)…" % len(bodies))
        lock, cursor, results, failures = threading.Lock(), [0], [], []
        sampler = MemSampler(srv, tag=lambda: len(results))
        c0 = srv.cpu()
        sampler.start()
        t0 = time.perf_counter()
        poster(srv.port, secret, bodies, lock, cursor, results, failures, expect="duplicates")
        wall = time.perf_counter() - t0
        got = sampler.finish()
        if failures:
            die("server append, bodies sent again: %s" % failures[0])
        time.sleep(0.5)
        after, _ = srv.status()
        r = {"bodies": len(bodies), "wall_s": round(wall, 4), "server_cpu_s": round(srv.cpu() - c0, 2),
             "anon_peak_kb": max(x[1] for x in got), "anon_after_kb": after}
        log("  %.2f s; RssAnon peak %d kB, then %d kB" % (wall, r["anon_peak_kb"], after))
        return r

    # -- report ----------------------------------------------------------------
    def report(self):
        res, t = self.res, self.t
        n = self.n
        nd = res["sizes"]["ndjson"]
        ing = res["ingest"]
        targets = []
        rows = []

        def target(name, ok, value, goal):
            targets.append({"target": name, "met": bool(ok), "value": value, "goal": goal})
            return met(ok)

        # ingest
        pt = ing["pushtrail"]
        pt_s = med(pt["wall_s"])
        evs = t["lines"] / pt_s
        sq = ing.get("sqlite3")
        ratio = med(sq["wall_s"]) / pt_s if sq else None
        ok = ratio is not None and ratio >= 4 and evs >= 300000
        rows.append(["ingest %s events (s)" % fmt_int(t["lines"]), fmt_time(pt["wall_s"], "s"),
                     fmt_time(sq["wall_s"], "s") if sq else "—", "—",
                     "sqlite3 ÷ pushtrail **%s**; pushtrail **%s events/s** (%.0f MB/s)" % (
                         fmt_ratio(ratio), fmt_int(evs), nd / MB / pt_s),
                     "≥ 4× sqlite3 and ≥ 300,000 events/s",
                     target("ingest", ok, {"ratio_vs_sqlite3": ratio, "events_per_s": evs},
                            ">= 4x sqlite3, >= 300000 events/s")])
        rows.append(["ingest CPU time, user+sys (s)", fmt_time(pt["cpu_s"], "s"),
                     fmt_time(sq["cpu_s"], "s") if sq else "—", "—",
                     "pushtrail runs a writer thread and a parsing thread per core (at most 3)", "—", "—"])
        def written(sysname, size_key):
            d = ing.get(sysname)
            if not d or None in d.get("written_bytes", [None]) or size_key not in res["sizes"]:
                return "—"
            w = med(d["written_bytes"])
            return "%s (%s its file)" % (fmt_mb(w), fmt_ratio(w / res["sizes"][size_key]))
        rows.append(["ingest: written to storage (MB)", written("pushtrail", "pushtrail_data_mdb"),
                     written("sqlite3", "sqlite_db"),
                     ("mdb_load " + written("mdb_load", "mdb_load_data_mdb")) if "mdb_load" in ing else "—",
                     "bytes sent to storage (/proc/PID/io write_bytes: pages dirtied, by write calls or a writable map), median", "—", "—"])
        for key, label in (("mdb_load", "raw LMDB load: `mdb_load` (s)"),
                           ("lmdb_floor", "raw LMDB load, one txn per 12,288 (s)")):
            if key in ing:
                fl = ing[key]
                rows.append([label, fmt_time(pt["wall_s"], "s"), "—",
                             "%s; CPU %s" % (fmt_time(fl["wall_s"], "s"), fmt_time(fl["cpu_s"], "s")),
                             "pushtrail ÷ %s %s (wall), %s (CPU)" % (
                                 "mdb_load" if key == "mdb_load" else "floor",
                                 fmt_ratio(pt_s / med(fl["wall_s"])),
                                 fmt_ratio(med(pt["cpu_s"]) / med(fl["cpu_s"]))),
                             "—", "—"])
        anon = [x for x in pt["rss_anon_peak_kb"] if x is not None]
        total = [x for x in pt["maxrss_kb"] if x is not None]
        anon_mb = max(anon) * 1024 / MB if anon else None
        rows.append(["ingest peak RSS: anonymous / total (MB)",
                     "%.0f / %.0f" % (anon_mb, max(total) * 1024 / MB) if anon and total else "—",
                     "%.0f / %.0f" % (max(sq["rss_anon_peak_kb"]) * 1024 / MB, max(sq["maxrss_kb"]) * 1024 / MB)
                     if sq else "—",
                     "—", "max over the runs; total includes mapped LMDB pages (page cache)",
                     "anonymous ≤ 150 MB",
                     target("rss", anon_mb is not None and anon_mb <= 150, {"anon_mb": anon_mb},
                            "<= 150 MB anonymous")])
        # queries
        qs = res["queries"]
        labels = {"thread": "thread replay, %d events (`thread %s`)" % (t["thread_events"], t["thread"]),
                  "task": "task rebuild, %d events (`task %d`)" % (t["task_events"], t["task"]),
                  "export": "export (`export --thread %s -o -`)" % t["thread"],
                  "user": "`log --user %s` (%d events)" % (t["user"], t["user_events"]),
                  "user_recent": "`log --user %s --json -n 100`" % t["user"],
                  "startup": "startup floor: `head` vs `SELECT … LIMIT 1`"}
        for name in ("thread", "task", "export", "user", "user_recent", "startup"):
            if name not in qs:  # results from before the row existed
                continue
            d = qs[name]
            p = med(d["pushtrail"])
            s = med(d["sqlite3"]) if d.get("sqlite3") else None
            j = med(d["jq"]) if d.get("jq") else None
            parts = []
            if s:
                parts.append("pushtrail ÷ sqlite3 **%s**" % fmt_ratio(p / s))
            if j:
                parts.append("jq ÷ pushtrail **%s**" % fmt_ratio(j / p))
            goal, status = "—", "—"
            if name == "user_recent":
                goal = "≤ sqlite3"
                status = target(name, s is not None and p <= s, {"pushtrail_s": p, "sqlite3_s": s}, "<= sqlite3")
            if name in ("thread", "task", "export"):
                goal = "≤ sqlite3 and ≥ 1000× faster than jq"
                ok = (s is not None and p <= s) and (j is not None and j / p >= 1000)
                status = target(name, ok, {"pushtrail_s": p, "sqlite3_s": s, "jq_s": j},
                                "<= sqlite3, >= 1000x jq")
                if s is None or j is None:
                    status += " (%s not run)" % " and ".join(
                        n for n, v in (("sqlite3", s), ("jq", j)) if v is None)
            rows.append([labels[name] + " (ms)", fmt_time(d["pushtrail"], "ms"),
                         fmt_time(d["sqlite3"], "ms") if d.get("sqlite3") else "—",
                         ("jq: " + fmt_time(d["jq"], "s")) if d.get("jq") else "—",
                         "; ".join(parts) or "—", goal, status])
        # verify / audit
        v = res["verify"]

        def first_run(v):
            if "first_wall_s" not in v:  # results from before the first run was kept apart
                return ""
            return "; the first run, before these: %.2f s, %.0f MB/s" % (v["first_wall_s"], nd / MB / v["first_wall_s"])
        vs = med(v["wall_s"])
        rate = nd / MB / vs
        rows.append(["`verify` whole store (s)", fmt_time(v["wall_s"], "s"), "—", "—",
                     "**%.0f MB/s** of NDJSON (%s ÷ median)%s" % (rate, fmt_mb(nd), first_run(v)), "≥ 500 MB/s",
                     target("verify", rate >= 500, {"mb_per_s": rate}, ">= 500 MB/s")])
        rows.append(["`audit` whole store (s)", fmt_time(res["audit"]["wall_s"], "s"), "—", "—",
                     "%.0f MB/s; %s events/s" % (nd / MB / med(res["audit"]["wall_s"]),
                                                 fmt_int(t["lines"] / med(res["audit"]["wall_s"]))), "—", "—"])
        # sizes
        sz = res["sizes"]
        st = sz["pushtrail_data_mdb"] / nd
        other = []
        if "sqlite_db" in sz:
            other.append("sqlite3 %s (%s)" % (fmt_mb(sz["sqlite_db"]), fmt_ratio(sz["sqlite_db"] / nd)))
        if "mdb_load_data_mdb" in sz:
            other.append("mdb_load %s (%s)" % (fmt_mb(sz["mdb_load_data_mdb"]), fmt_ratio(sz["mdb_load_data_mdb"] / nd)))
        rows.append(["store size: data.mdb vs NDJSON", "%s (NDJSON %s)" % (fmt_mb(sz["pushtrail_data_mdb"]), fmt_mb(nd)),
                     other[0] if other and "sqlite_db" in sz else "—",
                     "; ".join(o for o in other if not o.startswith("sqlite3")) or "—",
                     "data.mdb ÷ NDJSON **%s**" % fmt_ratio(st), "≤ 1.6×",
                     target("store_size", st <= 1.6, {"ratio": st}, "<= 1.6x NDJSON")])
        if res.get("server"):
            rows += self.server_rows(res["server"], target)
        # growth
        growth = self.growth()
        judged = False
        for g in growth:
            ok = g["pushtrail_ratio"] <= 1.5
            # The target is stated for 1M -> 10M; other 10x pairs are shown, not judged.
            official = (g["small"], g["large"]) == (1000000, 10000000)
            judged |= official
            rows.append(["growth %s: %s → %s events" % (g["query"], fmt_int(g["small"]), fmt_int(g["large"])),
                         "%s → %s" % (fmt_time([g["pushtrail_small"]], "ms"), fmt_time([g["pushtrail_large"]], "ms")),
                         ("%s → %s (%s)" % (fmt_time([g["sqlite3_small"]], "ms"), fmt_time([g["sqlite3_large"]], "ms"),
                                            fmt_ratio(g["sqlite3_ratio"]))) if g.get("sqlite3_ratio") else "—",
                         "other run: %s, git %s" % (g["other_started"], g["other_git"]),
                         "pushtrail large ÷ small **%s**" % fmt_ratio(g["pushtrail_ratio"]),
                         "≤ 1.5× (1M → 10M)" if official else "— (the target is 1M → 10M)",
                         target("growth_" + g["query"], ok, {"ratio": g["pushtrail_ratio"]}, "<= 1.5x")
                         if official else "—"])
        if not judged:
            for qn in ("thread", "task"):
                targets.append({"target": "growth_" + qn, "met": None, "value": None,
                                "goal": "<= 1.5x (needs bench-results for 10x the events)"})
        res["growth"] = growth
        res["targets"] = targets
        self.rows = rows

    def server_rows(self, sv, target):
        """The table's rows of the server section (`report` passes its target recorder)."""
        rows = []
        q, cli = sv["queries"], sv["cli"]

        def others(d):
            o = d.get("other_cpu_s")
            return "; other processes' CPU %s a run" % fmt_time(o, "s") if o else ""

        for name, route, cmd in (("tasks", "/v1/tasks/{id}", "task ID --json"),
                                 ("threads", "/v1/threads/{id}", "thread ID --json")):
            d, c = q[name], cli[name]
            rps = med(d["rps"])
            ratio, ratio_seq = rps / c["parallel2_qps"], rps / c["sequential_qps"]
            spread = " (%s–%s)" % (fmt_int(min(d["rps"])), fmt_int(max(d["rps"]))) if len(d["rps"]) > 1 else ""
            errors = sum(d["socket_errors"])
            rows.append(["server `GET %s`, 32 clients, %d ids (req/s)" % (route, sv["paths"][name]),
                         fmt_int(rps) + spread, "—",
                         "CLI `%s`, a process each: %s/s in sequence, %s/s two at a time" % (
                             cmd, fmt_int(c["sequential_qps"]), fmt_int(c["parallel2_qps"])),
                         "server ÷ CLI two at a time **%s** (in sequence %s)%s" % (
                             fmt_ratio(ratio), fmt_ratio(ratio_seq),
                             "; %d socket errors" % errors if errors else ""),
                         "≥ 5,000 req/s and ≥ 10× the CLI",
                         target("server_" + name, rps >= 5000 and ratio >= 10,
                                {"req_per_s": rps, "ratio_vs_cli": ratio}, ">= 5000 req/s, >= 10x the CLI")])
            p99 = med(d["p99_ms"])
            cpu_us = sum(d["server_cpu_s"]) / sum(d["requests"]) * 1e6
            wrk_share = sum(d["wrk_cpu_s"]) / (sum(d["wrk_cpu_s"]) + sum(d["server_cpu_s"]))
            rows.append(["server `GET %s` latency p50 / p99 (ms)" % route,
                         "%.2f / %.2f" % (med(d["p50_ms"]), p99), "—", "—",
                         "p90 %.2f ms, max %.1f ms; server CPU %.0f µs a request (wrk: %.0f%% of the CPU used%s)" % (
                             med(d["p90_ms"]), max(d["max_ms"]), cpu_us, wrk_share * 100, others(d)),
                         "p99 ≤ 20 ms",
                         target("server_%s_p99" % name, p99 <= 20, {"p99_ms": p99}, "<= 20 ms")])
        for name, d in sv.get("pages", {}).items():
            rows.append(["page `%s`, 8 clients, %d ids: req/s, p50 / p99 (ms)" % (name, d["paths"]),
                         "%s; %.2f / %.2f" % (fmt_int(d["rps"]), d["p50_ms"], d["p99_ms"]), "—", "—",
                         "max %.1f ms; %s bytes a page; RssAnon peak %.0f MB" % (
                             d["max_ms"], fmt_int(d["bytes_per_page"]), d["anon_peak_kb"] * 1024 / MB),
                         "p99 ≤ 50 ms",
                         target("page_%s_p99" % name, d["p99_ms"] <= 50, {"p99_ms": d["p99_ms"]}, "<= 50 ms")])
        m = sv["query_memory"]
        first, last = m["round_peaks_kb"][0], m["round_peaks_kb"][-1]
        grows = last > first * 1.1 + 4096
        peak_mb = m["peak_kb"] * 1024 / MB
        rows.append(["server RssAnon under queries: before / peak / after (MB)",
                     "%.1f / %.1f / %.1f" % (m["before_kb"] * 1024 / MB, peak_mb, m["after_kb"] * 1024 / MB),
                     "—", "—",
                     "peak by round (both routes): %s MB; up to %d threads" % (
                         ", ".join("%.1f" % (x * 1024 / MB) for x in m["round_peaks_kb"]),
                         max(max(q[n]["threads_peak"]) for n in q)),
                     "≤ 200 MB, not growing",
                     target("server_query_memory", peak_mb <= 200 and not grows,
                            {"peak_mb": peak_mb, "first_round_kb": first, "last_round_kb": last},
                            "<= 200 MB, last round's peak <= 1.1x the first's + 4 MiB")])
        ap = sv["appends"]
        lines, per = self.t["lines"], ap["lines_per_body"]
        cli_eps = lines / med(self.res["ingest"]["pushtrail"]["wall_s"])
        cli_store = self.res["sizes"]["pushtrail_data_mdb"]
        eps = {c: med(d["events_per_s"]) for c, d in ap["runs"].items() if d["events_per_s"]}
        best = max(eps, key=lambda c: eps[c]) if eps else None
        one = ap["runs"].get("1", {}).get("acked_s", [])

        def one_client_rate(k):
            """1 client's events/s over its first k bodies, median of its complete runs."""
            xs = [k * per / a[k - 1] for a in one if len(a) >= k and a[k - 1] > 0]
            return med(xs)

        crashed = [c for c, d in ap["runs"].items() if d.get("crashes")]
        judged = False
        for c, d in ap["runs"].items():
            label = "server append: %d bodies of %s lines, %s client%s (s)" % (
                ap["bodies"], fmt_int(per), c, "" if c == "1" else "s")
            crashes = d.get("crashes", [])
            goal, status = "—", "—"
            if c == best:
                goal = "best complete run ≥ 0.7× the CLI"
                status = target("server_append", eps[c] / cli_eps >= 0.7,
                                {"events_per_s": eps[c], "clients": int(c), "ratio_vs_cli": eps[c] / cli_eps},
                                ">= 0.7x CLI ingest (best client count)")
            if crashes:
                goal = (goal + "; " if goal != "—" else "") + "no crash"
                if not judged:
                    target("server_append_completes", False, {"crashed_with_clients": [int(x) for x in crashed]},
                           "every append run completes")
                    judged = True
                status = (status + "; " if status != "—" else "") + "**not met**"
            parts = []
            if d["events_per_s"]:
                sb = med(d["store_bytes"])
                parts.append("HTTP ÷ CLI **%s**; server CPU %s%s; served store %s (%s the CLI's), %s" % (
                    fmt_ratio(eps[c] / cli_eps), fmt_time(d["server_cpu_s"], "s"), others(d), fmt_mb(sb),
                    fmt_ratio(sb / cli_store),
                    "records stored whole" if max(d["store_format"]) == 1 else "records compressed"))
            if crashes:
                k = min(x["bodies_answered"] for x in crashes)
                rate = med([x["events_answered"] / x["answered_s"] for x in crashes if x["answered_s"]])
                ref = one_client_rate(k) if k else None
                parts.append("**the server crashed** (signal %s) in %d of %d runs, after %s of %d bodies; "
                             "until then %s events/s%s; its store kept every answered body, verify ok" % (
                                 "/".join(sorted(set(str(x["signal"]) for x in crashes))), len(crashes),
                                 len(crashes) + len(d["wall_s"]),
                                 ", ".join(str(x["bodies_answered"]) for x in crashes), ap["bodies"],
                                 fmt_int(rate) if rate else "—",
                                 " (1 client over its first %d bodies: %s)" % (k, fmt_int(ref)) if ref else ""))
            shown = ("%s; **%s events/s**" % (fmt_time(d["wall_s"], "s"), fmt_int(eps[c]))
                     if d["events_per_s"] else "crashed")
            rows.append([label, shown, "—", "CLI `ingest` of the same file: %s events/s, store %s" % (
                fmt_int(cli_eps), fmt_mb(cli_store)), "; ".join(parts), goal, status])
        runs = [d for d in ap["runs"].values() if d["anon_peak_kb"]]
        cp = ["%s: %.1f" % (c, max(x.get("anon_peak_kb") or 0 for x in d["crashes"]) * 1024 / MB)
              for c, d in ap["runs"].items() if d.get("crashes")]
        crash_peaks = "; runs that crashed, peak until then: %s MB" % ", ".join(cp) if cp else ""
        if runs:
            peak = max(max(d["anon_peak_kb"]) for d in runs)
            h1 = max([x for d in runs for x in d["first_half_peak_kb"] if x is not None] or [0])
            h2 = max([x for d in runs for x in d["second_half_peak_kb"] if x is not None] or [0])
            halves = ("%.1f / %.1f MB" % (h1 * 1024 / MB, h2 * 1024 / MB)) if h1 else "— (too short for a sample)"
            rp = ap["runs"].get("1", {}).get("repeat")
            if rp:
                # The store grows during a pass, and the memory with it; the repeat sends as
                # many requests again to an unchanging store.
                first = ap["runs"]["1"]["anon_peak_kb"][-1]
                grows = rp["anon_peak_kb"] > first * 1.1 + 4096
                halves += "; the same bodies sent again (duplicates, the store unchanged): peak %.1f MB, " \
                          "after %.1f MB" % (rp["anon_peak_kb"] * 1024 / MB, rp["anon_after_kb"] * 1024 / MB)
                goal = "repeat's peak <= 1.1x the first pass's + 4 MiB"
                value = {"first_pass_kb": first, "repeat_kb": rp["anon_peak_kb"]}
            else:
                grows = bool(h1) and h2 > h1 * 1.1 + 4096
                goal = "second half's peak <= 1.1x the first's + 4 MiB"
                value = {"first_half_kb": h1, "second_half_kb": h2}
            rows.append(["server RssAnon under appends: before / peak / after (MB)",
                         "%.1f / %.1f / %.1f" % (max(max(d["anon_before_kb"]) for d in runs) * 1024 / MB,
                                                 peak * 1024 / MB,
                                                 max(max(d["anon_after_kb"]) for d in runs) * 1024 / MB), "—", "—",
                         "complete runs; peak by clients: %s MB; while the first / second half of the bodies "
                         "went in: %s%s" % (", ".join("%s: %.1f" % (c, max(d["anon_peak_kb"]) * 1024 / MB)
                                                      for c, d in ap["runs"].items() if d["anon_peak_kb"]), halves,
                                            crash_peaks),
                         "≤ 200 MB, not growing",
                         target("server_append_memory", peak * 1024 / MB <= 200 and not grows,
                                dict(value, peak_mb=peak * 1024 / MB), "<= 200 MB, " + goal)])
        return rows

    def growth(self):
        out = []
        d = self.a.results
        for other in (self.n * 10, self.n // 10):
            p = os.path.join(d, "bench-%d%s.json" % (other, self.suffix))
            if other <= 0 or not os.path.isfile(p):
                continue
            try:
                with open(p) as f:
                    o = json.load(f)
            except (OSError, ValueError):
                continue
            small, large = (o, self.res) if other < self.n else (self.res, o)
            for qn in ("thread", "task"):
                try:
                    ps, pl = med(small["queries"][qn]["pushtrail"]), med(large["queries"][qn]["pushtrail"])
                except (KeyError, TypeError):
                    continue
                g = {"query": qn, "small": small["events"], "large": large["events"],
                     "pushtrail_small": ps, "pushtrail_large": pl, "pushtrail_ratio": pl / ps,
                     "other_result": p, "other_started": o.get("started"),
                     "other_git": o.get("machine", {}).get("git")}
                try:
                    ss, sl = med(small["queries"][qn]["sqlite3"]), med(large["queries"][qn]["sqlite3"])
                    if ss and sl:
                        g.update(sqlite3_small=ss, sqlite3_large=sl, sqlite3_ratio=sl / ss)
                except (KeyError, TypeError):
                    pass
                out.append(g)
            break
        return out

    def markdown(self):
        m, res = self.res["machine"], self.res
        lines = []
        lines.append("### pushtrail benchmark: %s events (seed 42%s)" % (
            fmt_int(self.t["lines"]), ", Android share %s" % self.share if self.share else ""))
        lines.append("")
        lines.append("`%s` · %s · git %s · total runtime %s" % (
            res["command"], res["started"], m["git"], fmt_dur(res.get("runtime_s"))))
        lines.append("")
        lines.append("Machine: %d CPUs (nproc), %s, %s RAM, Linux %s, %s; fdatasync of a 4 KiB write: %.1f ms (median)." % (
            m["nproc"], m["cpu"], m["memory"], m["kernel"], m["os"], m["fdatasync_ms"]))
        lines.append("Tools: %s; sqlite3 %s; %s; %s; python %s." % (
            m["swift"], m["sqlite3"], m["jq"], m["lmdb"], m["python3"]))
        s = res["settings"]
        la = res.get("loadavg_1min")
        if la:
            lines.append("1-minute load average at the start of the timed runs: median %.2f, max %.2f "
                         "(2 means both cores busy before the run began)." % (la["median"], la["max"]))
        skipped = s.get("skip", [])
        jq = "no jq runs" if ("jq" in skipped or not s["jq_reps"]) else "%d jq run(s)" % s["jq_reps"]
        lines.append("Medians (min–max) of %d ingest/audit runs, %d verify runs%s, %d query runs (fresh process each, after 2 warm-up runs), %s%s." % (
            s["ingest_reps"], s.get("verify_reps", s["ingest_reps"]),
            " (after a first one)" if "first_wall_s" in res["verify"] else "", s["query_reps"], jq,
            "; skipped: " + ", ".join(skipped) if skipped else ""))
        sv = res.get("server")
        if sv:
            ap = sv["appends"]
            la = sv.get("loadavg_1min_start")
            lines.append("Server: `wrk -t 2 -c 32` (2 threads, 32 keep-alive connections, a bearer token), %d runs of "
                         "%d s per route, taking turns; the CLI %d processes per question; appends as %d POST bodies, "
                         "%d run(s) per client count, each into a fresh store and server%s." % (
                             sv["rounds"], sv["seconds"], sv["cli"]["tasks"]["runs"], ap["bodies"],
                             len(next(iter(ap["runs"].values()))["wall_s"]),
                             "; load average at its start %.2f" % la if la is not None else ""))
        lines.append("")
        lines.append("| measurement | pushtrail | sqlite3 | other baseline | ratio | target | result |")
        lines.append("|---|---|---|---|---|---|---|")
        for r in self.rows:
            lines.append("| " + " | ".join(r) + " |")
        lines.append("")
        tg = res["targets"]
        done = [x for x in tg if x["met"] is not None]
        lines.append("Targets met: %d of %d%s." % (sum(1 for x in done if x["met"]), len(done),
                     "" if len(done) == len(tg) else
                     " (the 1M → 10M growth needs results for both sizes in bench-results/)"))
        checks = res.get("checks", {})
        bad = [k for k, c in checks.items() if not c["ok"]]
        tools = ["pushtrail"] + [t for t in ("sqlite3", "jq") if any(t in c for c in checks.values())]
        lines.append("Selection check (%s return the same events as the generator's data): %s." % (
            ", ".join(tools[:-1]) + " and " + tools[-1] if len(tools) > 1 else tools[0],
            "ok" if not bad else "MISMATCH in " + ", ".join(bad)))
        return "\n".join(lines)


def fmt_dur(s):
    if s is None:
        return "?"
    return "%dm%02ds" % (int(s) // 60, int(s) % 60)


def render(path, results):
    """Prints the Markdown of a stored result again (growth rows as of now)."""
    with open(path) as f:
        res = json.load(f)
    a = argparse.Namespace(results=results, events=res["events"], workdir=None, pushtrail=None, gen=None,
                           ingest_reps=0, query_reps=0, jq_reps=0, skip=set(), command=res["command"])
    b = Bench.__new__(Bench)
    b.a, b.n, b.res = a, res["events"], res
    b.share = res.get("android_share", 0.0)
    b.suffix = "-android%s" % b.share if b.share else ""
    b.t = dict(res["chosen"], lines=res["input"]["lines"])
    b.report()
    print(b.markdown())


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--render":
        render(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(os.path.abspath(sys.argv[2])))
        return
    ap = argparse.ArgumentParser(prog="bench.py")
    ap.add_argument("--events", type=int, default=1000000)
    ap.add_argument("--android-share", type=float, default=0.0)  # passed to pushtrail-gen
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--pushtrail", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--ingest-reps", type=int, required=True)
    ap.add_argument("--query-reps", type=int, required=True)
    ap.add_argument("--jq-reps", type=int, required=True)
    ap.add_argument("--skip", default="")
    ap.add_argument("--server", default=None)  # pushtrail-server; the server section needs it
    ap.add_argument("--server-seconds", type=int, default=10)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--command", default="Scripts/bench.sh")
    ap.add_argument("--started-ns", type=int, default=None)
    a = ap.parse_args()
    a.skip = set(x for x in a.skip.split(",") if x)
    if "server" not in a.skip and not a.server:
        die("the server section needs --server PATH (or --skip server)")
    if not 0 <= a.android_share <= 1:
        die("--android-share must be a number from 0 to 1, got %s" % a.android_share)
    t_start = time.perf_counter()

    work = os.path.abspath(a.workdir)
    root = os.path.realpath(ROOT)
    if os.path.realpath(work) == root or os.path.realpath(work).startswith(root + os.sep):
        die("the work dir %s is inside the repository; use one outside it" % work)
    if os.path.exists(work):
        if not os.path.isdir(work):
            die("%s exists and is not a directory" % work)
        if os.listdir(work) and not os.path.exists(os.path.join(work, MARKER)):
            die("%s is not empty and was not made by this benchmark (no %s in it); "
                "remove it or pass another --workdir" % (work, MARKER))
        shutil.rmtree(work)
    os.makedirs(work)
    open(os.path.join(work, MARKER), "w").close()
    a.workdir = work
    os.makedirs(a.results, exist_ok=True)

    b = Bench(a)
    b.machine()
    b.generate()
    b.ingest()
    b.queries()
    b.verify_audit()
    b.server()
    if a.started_ns:
        b.res["runtime_s"] = round((time.time_ns() - a.started_ns) / 1e9, 1)
    else:
        b.res["runtime_s"] = round(time.perf_counter() - t_start, 1)
    if LOADS:
        b.res["loadavg_1min"] = {"min": min(LOADS), "median": med(LOADS), "max": max(LOADS)}
    b.report()
    md = b.markdown()
    b.res["markdown"] = md
    out = os.path.join(a.results, "bench-%d%s.json" % (a.events, b.suffix))
    with open(out, "w") as f:
        json.dump(b.res, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(md)
    log("result written to %s" % out)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        log("work dir kept: %s" % work)


if __name__ == "__main__":
    main()
