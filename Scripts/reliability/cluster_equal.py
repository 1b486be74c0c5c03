#!/usr/bin/env python3
"""Helpers of Scripts/cluster-test.sh: a cluster's answers against one store's.

    cluster_equal.py expect EVENTS PARTITIONS LIST...
        How many of EVENTS, published in PARTITIONS partitions, each LIST (0-1, 2,5…)
        of partitions holds, on one line.
    cluster_equal.py cross EVENTS SEED N PARTITIONS LIST...
        Prints N notifications that make threads span shards (the shards owning the
        partitions LIST…): each a copy, under a new id, of a notification of a task on
        one shard, naming in its thread id the thread of a task on another shard (a
        thread_id_mismatch); every other one at the very `at` of one of that thread's
        events, so that the thread's timeline has a tie across shards.
    cluster_equal.py shards PUSHTRAIL EVENTS PARTITIONS DIR:LIST...
        Each shard store DIR must hold exactly the events of its partitions LIST (0-1,
        2,5…) of EVENTS published in PARTITIONS partitions, each once, and its `stats`
        streams must be those partitions' last sequences (a new stream numbers the
        messages 1, 2, 3… in the order published). Prints one line, the shards' event
        counts, or `FAIL: reasons` (exit 1).
    cluster_equal.py compare PUSHTRAIL SINGLE CLUSTER EVENTS SEED SHARD_DIR...
        Asks the single store SINGLE and the cluster file CLUSTER the same questions
        (every reading command, a seeded random spread of subjects, filters and times)
        and compares the answers: the same exit status, and the same output once the
        differences a cluster is documented to have are taken out (see `normalise`,
        `untie` and `html`). Also checks the audit's counts against the shards' own
        (SHARD_DIR…, read directly). Prints the comparisons by command; exit 1, with
        the first differences, when any differ.
"""
import bisect
import concurrent.futures
import datetime
import json
import os
import random
import re
import subprocess
import sys
import uuid
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_crash import task_of  # noqa: E402


def load(path):
    with open(path, "rb") as f:
        return [json.loads(line) for line in f if line.strip()]


def partition_list(text):
    owned = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        owned.extend(range(int(lo), int(hi or lo) + 1))
    return owned


def published(events, partitions):
    """Each event's partition (None: a delivery whose notification never comes, which
    publish rejects) and each partition's last stream sequence, as `pushtrail publish`
    sends them: in order, a delivery held until its notification has gone."""
    notification_task = {}
    where = {}
    last = {p: 0 for p in range(partitions)}
    held = {}
    sequence = 0
    for e in events:
        task = task_of(e)
        if task is None:
            ref = str(e.get("notification_id", "")).lower()
            task = notification_task.get(ref)
            if task is None:
                held.setdefault(ref, []).append(e["id"])
                continue
        p = zlib.crc32(str(task).encode()) % partitions
        where[e["id"]] = p
        sequence += 1
        last[p] = sequence
        if e["type"] == "notification":
            key = e["id"].lower()
            notification_task[key] = task
            for waiting in held.pop(key, []):
                where[waiting] = p
                sequence += 1
                last[p] = sequence
    return where, last


def run(args, env=None):
    r = subprocess.run(args, capture_output=True, env=env)
    return r.returncode, r.stdout, r.stderr


def expect(events_path, partitions, lists):
    where, _ = published(load(events_path), int(partitions))
    counts = [0] * len(lists)
    owners = [set(partition_list(text)) for text in lists]
    for p in where.values():
        for i, owned in enumerate(owners):
            if p in owned:
                counts[i] += 1
    print(" ".join(map(str, counts)))
    return 0


def cross(events_path, seed, count, partitions, lists):
    rnd = random.Random(seed)
    events = load(events_path)
    where, _ = published(events, int(partitions))
    shard_of = {}
    for i, text in enumerate(lists):
        for p in partition_list(text):
            shard_of[p] = i
    notifications = [e for e in events if e["type"] == "notification" and e["id"] in where]
    thread_events = {}
    for e in notifications:
        thread_events.setdefault(notification_fields(e)[1], []).append(e)
    for k in range(int(count)):
        e = json.loads(json.dumps(rnd.choice(notifications)))
        here = shard_of[where[e["id"]]]
        while True:
            other = rnd.choice(notifications)
            thread = notification_fields(other)[1]
            if shard_of[where[other["id"]]] != here and thread and thread.startswith("task-"):
                break
        members = sorted(thread_events[thread], key=lambda m: m["at"])
        e["id"] = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
        payload = e["payload"]
        if isinstance(payload.get("aps"), dict):
            payload["aps"]["thread-id"] = thread
        else:
            payload["data"]["thread_id"] = thread
        # A tie with an event of the thread other than its last, so that which event is
        # last (the default anchor of relative times) does not depend on the tie.
        if k % 2 == 0 and len(members) > 1:
            e["at"] = rnd.choice(members[:-1])["at"]
        else:
            e["at"] = stamp(rnd.randint(millis(members[0]["at"]), millis(members[-1]["at"])))
        print(json.dumps(e, ensure_ascii=False, separators=(",", ":")))
    return 0


def shards(pt, events_path, partitions, specs):
    events = load(events_path)
    where, last = published(events, int(partitions))
    problems, said = [], []
    for spec in specs:
        store, _, owned = spec.rpartition(":")
        owned = partition_list(owned)
        name = os.path.basename(store)
        wanted = {i for i, p in where.items() if p in owned}
        status, out, err = run([pt, "log", "--raw", "--store", store])
        if status != 0:
            problems.append("log --raw of shard %s exited %d: %s" % (name, status, err.decode().strip()))
            continue
        ids = [json.loads(line)["id"] for line in out.splitlines() if line.strip()]
        if len(ids) != len(set(ids)) or set(ids) != wanted:
            problems.append("shard %s holds %d events (%d distinct), %d missing and %d foreign; %d expected" % (
                name, len(ids), len(set(ids)), len(wanted - set(ids)), len(set(ids) - wanted), len(wanted)))
        stats = json.loads(run([pt, "stats", "--json", "--store", store])[1])
        positions = {s["partition"]: s["sequence"] for s in stats["streams"]}
        if positions != {p: last[p] for p in owned}:
            problems.append("shard %s is stored through %s; its partitions end at %s" % (
                name, positions, {p: last[p] for p in owned}))
        said.append("%s %d events (%s)" % (name, len(ids), " ".join("%d@%d" % kv for kv in sorted(positions.items()))))
    orphans = len(events) - len(where)
    if problems:
        print("FAIL: " + "; ".join(problems))
        return 1
    print(", ".join(said) + (" (%d deliveries without a notification not published)" % orphans if orphans else ""))
    return 0


# --- Normalising answers -------------------------------------------------------------

# Keys whose values are each store's own and so differ between the cluster and the
# single store by design: an event's seq, its chain hash and when the store appended
# it (the shard appended it at another moment, after other events), the shard an event
# came from (the cluster's addition), and the stores' sizes, dictionaries and format
# version (four stores against one; a consumed store uses the recent tier, format 3,
# STORE.md). `streams` (stats) holds the consumed partitions' sequences, which the
# single store, ingested from the file, does not have: `shards` checks them. An
# `as_of` that is a position (`@HEAD` over a cluster, `@SEQ` in one store, without
# --at) becomes "@…"; a time (--at T) stays. `missing_shards` is not taken out: with
# every shard up it must not appear. The stored event itself (`event`) is compared
# as it is.
OWN_KEYS = {"seq", "shard", "recorded_at", "hash", "first_seq", "last_seq", "store_bytes", "dictionaries", "format",
            "streams"}
# A finding's message may name an event by its seq ("cancelled … by action X (seq 122)").
SEQ_IN_TEXT = re.compile(r"\bseq \d+")


# An adb script names its notification's seq twice, in its first comment ("(seq 12,
# thread …)") and in the google.message_id it makes ("pushtrail-12-$(date +%s)-$$"):
# the shard's seq, not the single store's. Only those two are taken out; an .apns or
# FCM file has no seq and must be the same byte for byte.
ADB_SEQ = re.compile(rb"(\(seq |\"pushtrail-)\d+")


# A position: `@SEQ` in one store, `@HEAD` over a cluster, `NAME@SEQ` for a task (its
# owning shard's head).
AS_OF_POSITION = re.compile(r"^[a-z0-9_]*@(\d+|HEAD)$")


def normalise(value):
    if isinstance(value, dict):
        return {k: "@…" if k == "as_of" and AS_OF_POSITION.match(str(v)) else v if k == "event" else normalise(v)
                for k, v in value.items() if k not in OWN_KEYS}
    if isinstance(value, list):
        return untie([normalise(v) for v in value])
    if isinstance(value, str):
        return SEQ_IN_TEXT.sub("seq N", value)
    return value


def moment(item):
    """(at, id) of a listed event, finding or history entry; None for other values."""
    if isinstance(item, dict):
        inner = item.get("event") if isinstance(item.get("event"), dict) else item
        if isinstance(inner.get("at"), str) and isinstance(inner.get("id"), str):
            return inner["at"], inner["id"]
    return None


def untie(items):
    """Lists merge in (at, shard, seq) order over a cluster and in (at, seq) order in one
    store, so events with the same `at` on different shards may come in another order.
    Within each run of equal `at` (and only there: the list's order is otherwise kept,
    newest first for -r too) the items are put in id order, stably, so that the several
    findings of one event keep theirs."""
    out, i = [], 0
    while i < len(items):
        m = moment(items[i])
        if m is None:
            out.append(items[i])
            i += 1
            continue
        j = i + 1
        while j < len(items) and moment(items[j]) is not None and moment(items[j])[0] == m[0]:
            j += 1
        out.extend(sorted(items[i:j], key=lambda x: moment(x)[1]))
        i = j
    return out


def parse(out, ndjson):
    text = out.decode("utf-8", "replace")
    if ndjson:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text) if text.strip() else None


# report's page differs from one store's, by design, in these only, which html() takes
# out: the header's "As of" (@HEAD against @SEQ without --at), "Chain head" (one seq
# and hash) against "Chain heads" (one per shard), "Store" (a directory) against
# "Cluster" (the file), "Report made" (the wall clock), and the footer, which names
# the store's head or tells to verify the shards; the seqs (an entry's `id="seq-N"`, over
# a cluster `id="seq-SHARD-N"`, and
# `<span class="seq">#N</span>`, the "Times relative to" event's "(#N, ", and "seq N"
# in finding messages); and the order of entries with the same `at` (as untie() does
# for JSON: such entries are put in the order of their text). When the page has such
# ties, the rows of its table of tasks are put in order too: they come in the order
# the tasks first appear in the timeline, which the ties may change.
HEADER_FACT = re.compile(r"^<dt>(Chain heads?|Store|Cluster)</dt><dd>.*</dd>\n", re.M)
AS_OF = re.compile(r"^(<dt>As of</dt><dd>)@(?:\d+|HEAD)(</dd>)$", re.M)
MADE = re.compile(r"^(<dt>Report made</dt><dd>)[^<]*(</dd>)$", re.M)
FOOTER = re.compile(r"^<footer>.*</footer>$", re.M)
SEQ_IN_PAGE = re.compile(r'(id="seq-|<span class="seq">#|\(#|\bseq )(?:[a-z0-9_]+-)?\d+')
ENTRY = re.compile(r'<li class="entry[^"]*"[^>]*>\n<div class="when"><time datetime="([^"]+)".*?</li>\n', re.S)
TASK_ROWS = re.compile(r'(<table class="tasks">\n<thead>.*?</thead>\n<tbody>\n)(.*?)(</tbody>)', re.S)


def html(page):
    page = HEADER_FACT.sub("", page)
    page = AS_OF.sub(r"\1@…\2", page)
    page = MADE.sub(r"\1…\2", page)
    page = FOOTER.sub("<footer>…</footer>", page)
    page = SEQ_IN_PAGE.sub(r"\1N", page)
    out, last, run, tied = [], 0, [], False

    def flush():
        out.extend(sorted(run))
        run.clear()

    for m in ENTRY.finditer(page):
        if m.start() != last or (run and ENTRY.match(run[-1]).group(1) != m.group(1)):
            flush()
        if m.start() != last:
            out.append(page[last:m.start()])
        tied = tied or bool(run)
        run.append(m.group(0))
        last = m.end()
    flush()
    out.append(page[last:])
    page = "".join(out)
    if tied:
        page = TASK_ROWS.sub(lambda m: m.group(1) + "".join(sorted(m.group(2).splitlines(True))) + m.group(3), page)
    return page


# --- The comparisons -----------------------------------------------------------------


class Comparer:
    def __init__(self, pt, single, cluster, env):
        self.pt, self.single, self.cluster, self.env = pt, single, cluster, env
        self.checks = []  # (label, args, kind)

    def add(self, label, args, kind="json"):
        """kind: json (one object), ndjson (one per line), bytes (the output byte for
        byte), html (report's page, see html())."""
        self.checks.append((label, args, kind))

    def one(self, check):
        label, args, kind = check
        extra = ["--json"] if kind in ("json", "ndjson") else []
        a = run([self.pt] + args + extra + ["--store", self.single], self.env)
        b = run([self.pt] + args + extra + ["--cluster", self.cluster], self.env)
        why = None
        if a[0] != b[0]:
            why = "exit %d from the single store, %d from the cluster" % (a[0], b[0])
        else:
            x, y = self.shape(kind, a[1], args), self.shape(kind, b[1], args)
            if x != y:
                why = first_difference(x, y)
            elif kind == "bytes" and a[0] == 0 and a[2] != b[2]:
                # A file written: its warnings (stderr) name the notification, not the store.
                why = "stderr: " + first_difference(a[2].decode("utf-8", "replace"), b[2].decode("utf-8", "replace"))
        return label, args, kind, a, b, why

    @staticmethod
    def shape(kind, out, args):
        if kind == "bytes":
            if "adb" in args:
                return ADB_SEQ.sub(rb"\1N", out)
            return out
        if kind == "html":
            return html(out.decode("utf-8", "replace"))
        try:
            value = normalise(parse(out, kind == "ndjson"))
        except ValueError as e:
            return "not JSON: %s: %r" % (e, out[:200])
        if kind == "ndjson" and "-n" in args:
            value = cut_boundary(value, "-r" in args)
        return value

    def run_all(self, workers):
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            return list(pool.map(self.one, self.checks))


def cut_boundary(items, reverse):
    """`log -n N` keeps the last N of each merge: when events with the boundary's `at`
    lie on several shards, the cluster may keep others of them than one store does.
    Those at the boundary's `at` are left out of the comparison (the count still
    counts); every later one must be the same."""
    if not items:
        return items
    edge = moment(items[-1 if reverse else 0])
    if edge is None:
        return items
    kept = [i for i in items if moment(i) is None or moment(i)[0] != edge[0]]
    return {"count": len(items), "after the boundary": kept}


def first_difference(x, y, path="$"):
    if type(x) is not type(y):
        return "%s: %s against %s" % (path, short(x), short(y))
    if isinstance(x, dict):
        for k in list(x) + [k for k in y if k not in x]:
            if k not in x or k not in y:
                return "%s.%s: %s against %s" % (path, k, short(x.get(k, "(absent)")), short(y.get(k, "(absent)")))
            if x[k] != y[k]:
                return first_difference(x[k], y[k], "%s.%s" % (path, k))
    if isinstance(x, list):
        for i, (p, q) in enumerate(zip(x, y)):
            if p != q:
                return first_difference(p, q, "%s[%d]" % (path, i))
        if len(x) != len(y):
            return "%s: %d items against %d" % (path, len(x), len(y))
    if isinstance(x, (str, bytes)) and x != y:
        i = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
        return "%s: differs at character %d: %s against %s" % (path, i, short(x[max(0, i - 60):i + 100]),
                                                                 short(y[max(0, i - 60):i + 100]))
    return "%s: %s against %s" % (path, short(x), short(y))


def short(v, n=300):
    s = v if isinstance(v, str) else repr(v) if isinstance(v, bytes) else json.dumps(v, ensure_ascii=False)
    return s if len(s) <= n else s[:n] + "…"


# --- What is asked ---------------------------------------------------------------------


def notification_fields(e):
    """(platform, thread, category, notification_type, residence) of a notification."""
    payload = e.get("payload") or {}
    aps = payload.get("aps")
    if isinstance(aps, dict):
        fields = payload
        thread, category = aps.get("thread-id"), aps.get("category")
        platform = "ios"
    else:
        fields = payload.get("data") or {}
        thread, category = fields.get("thread_id"), fields.get("category")
        platform = "android"
    return platform, thread, category, fields.get("notification_type"), fields.get("residence_id")


def millis(at):
    """An event's `at` (…T…Z, milliseconds) as milliseconds since 2000, for arithmetic."""
    t = datetime.datetime.strptime(at, "%Y-%m-%dT%H:%M:%S.%fZ")
    return int((t - datetime.datetime(2000, 1, 1)).total_seconds() * 1000)


def stamp(ms):
    t = datetime.datetime(2000, 1, 1) + datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


class Subjects:
    """The events' tasks, threads, users and notifications, and which shard holds each event."""

    def __init__(self, events, cluster_path):
        with open(cluster_path) as f:
            cluster = json.load(f)
        shard_of_partition = {}
        for shard in cluster["shards"]:
            for p in shard["partitions"]:
                shard_of_partition[p] = shard["name"]
        where, _ = published(events, cluster["partitions"])
        self.events = [e for e in events if e["id"] in where]
        self.shard = {e["id"]: shard_of_partition[where[e["id"]]] for e in self.events}
        self.tasks, self.users, self.threads = {}, {}, {}
        self.ios, self.android, self.others = [], [], []
        self.categories, self.types, self.residences = set(), set(), set()
        notification_thread = {}
        for e in self.events:
            self.users.setdefault(e["user"], []).append(e)
            task = task_of(e)
            if task is not None:
                self.tasks.setdefault(task, []).append(e)
            if e["type"] == "notification":
                platform, thread, category, kind, residence = notification_fields(e)
                (self.ios if platform == "ios" else self.android).append(e)
                if thread is not None:
                    notification_thread[e["id"].lower()] = thread
                    self.threads.setdefault(thread, []).append(e)
                for values, v in ((self.categories, category), (self.types, kind), (self.residences, residence)):
                    if v is not None:
                        values.add(str(v))
            else:
                self.others.append(e)
        # A thread's members: its notifications, the actions naming it, and the actions
        # and deliveries of its notifications (COMMANDS.md, thread).
        for e in self.others:
            named = {e.get("thread_id"), notification_thread.get(str(e.get("notification_id", "")).lower())}
            for thread in named - {None}:
                if thread in self.threads:
                    self.threads[thread].append(e)
        self.spanning = sorted(t for t, members in self.threads.items()
                               if len({self.shard[m["id"]] for m in members}) > 1)
        ats = [millis(e["at"]) for e in self.events]
        self.first, self.last = min(ats), max(ats)

    def moment_in(self, rnd, members):
        """A time among `members`' (or the whole span): an event's own `at` now and then
        (at ≤ T keeps it), else one between two of them. Never one whose last event at
        or before it shares its `at` with another member: which of those is last (the
        latest notification export takes, the last event times are measured from) is
        a matter of merge order, (at, shard, seq) against (at, seq)."""
        ats = sorted(millis(e["at"]) for e in members) if members else [self.first, self.last]
        tied = {a for a, b in zip(ats, ats[1:]) if a == b} if members else set()
        for _ in range(50):
            t = rnd.choice(ats) if rnd.random() < 0.3 else rnd.randint(ats[0], ats[-1])
            if ats[bisect.bisect_right(ats, t) - 1] not in tied:
                break
        return stamp(t)


def plan(c, subjects, findings, rnd, scale, shared_seq):
    """Every question, in c: a seeded random spread over the subjects, with the tasks,
    threads and users of the single store's findings (every code) among them.
    shared_seq(user) names an event of the user whose seq another shard gives to
    another of the user's events, or None."""
    def sample(items, n):
        items = sorted(items, key=str)
        return rnd.sample(items, min(n, len(items)))

    def window(hours):
        start = rnd.randint(subjects.first, max(subjects.first, subjects.last - hours * 3600_000))
        return ["--since", stamp(start), "--until", stamp(start + hours * 3600_000)]

    n = lambda k: max(1, int(k * scale))  # noqa: E731
    by_code = {}
    for f in findings:
        by_code.setdefault(f["code"], []).append(f)
    finding_tasks = {f["task_id"] for code in by_code for f in sample(by_code[code], 2) if f.get("task_id")}
    unregistered = by_code.get("sent_after_unregistered", [])
    finding_tasks |= {f["task_id"] for f in sample(unregistered, 6) if f.get("task_id")}
    by_id = {e["id"]: e for e in subjects.events}
    finding_users = {by_id[f["id"]]["user"] for f in sample(unregistered, 6) if f["id"] in by_id}

    tasks = sample(subjects.tasks, n(40)) + sorted(t for t in finding_tasks if t in subjects.tasks)
    for t in tasks:
        members = subjects.tasks[t]
        c.add("task", ["task", str(t)])
        c.add("task", ["task", str(t), "--at", subjects.moment_in(rnd, members)])
        c.add("log", ["log", "--task", str(t)], "ndjson")
        c.add("audit", ["audit", "--task", str(t)])
        c.add("export --task", ["export", "--task", str(t), "-o", "-"], "bytes")
        at = subjects.moment_in(rnd, members)
        c.add("export --task", ["export", "--task", str(t), "--at", at, "-o", "-"], "bytes")
        c.add("report", ["report", "--task", str(t), "-o", "-"], "html")
    c.add("task", ["task", "999999999"])

    threads = sample(subjects.threads, n(30)) + sample(subjects.spanning, n(20))
    for x in threads:
        members = subjects.threads[x]
        c.add("thread", ["thread", x])
        c.add("thread", ["thread", x, "--at", subjects.moment_in(rnd, members)])
        c.add("log", ["log", "--thread", x], "ndjson")
        c.add("audit", ["audit", "--thread", x])
        c.add("report", ["report", "--thread", x, "-o", "-"], "html")
        c.add("report", ["report", "--thread", x, "--at", subjects.moment_in(rnd, members), "-o", "-"], "html")
        c.add("export --thread", ["export", "--thread", x, "-o", "-"], "bytes")
        for platform in sorted({notification_fields(e)[0] for e in members if e["type"] == "notification"}):
            c.add("export --thread", ["export", "--thread", x, "--platform", platform, "-o", "-"], "bytes")
            if platform == "android":
                c.add("export --thread", ["export", "--thread", x, "--platform", "android", "--format", "adb", "-o",
                                          "-"], "bytes")
    c.add("thread", ["thread", "no-such-thread"])

    for u in sample(subjects.users, n(15)) + sorted(finding_users):
        members = subjects.users[u]
        c.add("log", ["log", "--user", u], "ndjson")
        c.add("log", ["log", "--user", u, "-n", "5", "-r"], "ndjson")
        since = subjects.moment_in(rnd, members)
        c.add("log", ["log", "--user", u, "--type", "notification", "--since", since], "ndjson")
        c.add("audit", ["audit", "--user", u])
        c.add("audit", ["audit", "--user", u, "--code", "sent_after_unregistered", "--code", "delivery_failed"])
        c.add("report", ["report", "--user", u, "--since", since, "-o", "-"], "html")
    # Over a cluster two events of one timeline may have the same seq, each on its shard:
    # a report measured from one of them (named by id) must still mark only that one.
    marked = 0
    for u in sample(subjects.users, len(subjects.users)):
        if marked == n(5):
            break
        twin = shared_seq(u)
        if twin:
            c.add("report", ["report", "--user", u, "--since", stamp(subjects.first), "--relative-to", twin, "-o",
                             "-"], "html")
            marked += 1
    c.add("log", ["log", "--user", "u_nobody"], "ndjson")
    c.add("audit", ["audit", "--user", "u_nobody"])

    # Filters over every shard, in windows of time so that the answers stay small.
    for kind in ("notification", "action", "delivery"):
        c.add("log", ["log", "--type", kind] + window(1), "ndjson")
    for category in sorted(subjects.categories):
        c.add("log", ["log", "--category", category] + window(2), "ndjson")
    for kind in sample(subjects.types, 4):
        c.add("log", ["log", "--notification-type", kind] + window(3), "ndjson")
    for residence in sample(subjects.residences, 3):
        c.add("log", ["log", "--residence", residence], "ndjson")
    # --grep ignores case: words of the events' answers, errors and names, some in
    # another case than stored.
    names = sorted({str(e["payload"].get("task_name") or (e["payload"].get("data") or {}).get("task_name"))
                    for e in sample(subjects.ios + subjects.android, 20)})
    for word in ["unregistered", "BADDEVICETOKEN", "internet connection", "task_cancelled"] + names[:3] + [
            names[-1].upper()]:
        c.add("log", ["log", "--grep", word] + window(6), "ndjson")
    for limit in ("1", "20", "300"):
        c.add("log", ["log", "-n", limit, "-r"], "ndjson")
        c.add("log", ["log", "-n", limit, "--until", subjects.moment_in(rnd, [])], "ndjson")
    c.add("log", ["log", "--type", "action", "-n", "50", "-r"] + window(24), "ndjson")
    c.add("audit", ["audit"] + window(6))
    c.add("audit", ["audit", "--since", subjects.moment_in(rnd, [])])
    for code in sorted(by_code):
        c.add("audit", ["audit", "--code", code] + window(12))
    c.add("audit", ["audit"])  # the whole store
    c.add("stats", ["stats"])

    shown = sample(subjects.events, n(60))
    for e in shown:
        c.add("show", ["show", e["id"]])
    for e in sample(subjects.ios + subjects.android, 3):
        c.add("show", ["show", e["id"].upper()])
    c.add("show", ["show", "no-such-event"])

    for e in sample(subjects.ios, n(30)):
        c.add("export apns", ["export", e["id"], "-o", "-"], "bytes")
        c.add("export apns", ["export", e["id"], "--format", "apns", "--bundle", "com.example.test", "-o", "-"],
              "bytes")
    for e in sample(subjects.android, n(30)):
        c.add("export fcm", ["export", e["id"], "-o", "-"], "bytes")
        c.add("export fcm", ["export", e["id"], "--format", "fcm", "--token", "test-device", "-o", "-"], "bytes")
        c.add("export adb", ["export", e["id"], "--format", "adb", "-o", "-"], "bytes")
        c.add("export adb", ["export", e["id"], "--format", "adb", "--package", "com.example.test", "--serial",
                             "emulator-5554", "-o", "-"], "bytes")
    if subjects.android:
        c.add("export refused", ["export", subjects.android[0]["id"], "--format", "apns", "-o", "-"], "bytes")
    c.add("export refused", ["export", rnd.choice(subjects.others)["id"], "-o", "-"], "bytes")
    c.add("export refused", ["export", "no-such-event", "-o", "-"], "bytes")


def compare(pt, single, cluster, events_path, seed, shard_dirs):
    rnd = random.Random(seed)
    subjects = Subjects(load(events_path), cluster)
    env = dict(os.environ)
    # Notifications without a topic or a package name export with these (both sides).
    env.update(PUSHTRAIL_BUNDLE="com.example.bundle", PUSHTRAIL_PACKAGE="com.example.package", NO_COLOR="1")
    problems = []

    # The audit's counts: the single store's, with sent_after_unregistered found more
    # often than the shards find it each alone (each knows only its own dead devices).
    def audit(*args):
        status, out, err = run([pt, "audit", "--json"] + list(args), env)
        if status not in (0, 1):  # 1: findings
            raise SystemExit("cluster compare: FAIL: audit --json %s exited %d: %s" % (
                " ".join(args), status, err.decode("utf-8", "replace").strip()))
        return json.loads(out)

    whole = audit("--store", single)
    over = audit("--cluster", cluster)
    alone = sum(audit("--code", "sent_after_unregistered", "--store", d)["counts"].get("sent_after_unregistered", 0)
                for d in shard_dirs)
    gathered = over["counts"].get("sent_after_unregistered", 0)
    if over["counts"] != whole["counts"]:
        problems.append("audit --json counts over the cluster %s, in the single store %s" % (
            json.dumps(over["counts"]), json.dumps(whole["counts"])))
    if not gathered > alone:
        problems.append("sent_after_unregistered: %d over the cluster, %d from the shards alone: not more" % (
            gathered, alone))
    print("cluster compare: audit counts equal (%d findings, %d codes); sent_after_unregistered %d over the cluster, "
          "%d from the shards each alone" % (sum(over["counts"].values()), len(over["counts"]), gathered, alone))

    def shared_seq(user):
        status, out, _ = run([pt, "log", "--user", user, "--json", "--cluster", cluster], env)
        first = {}
        for line in out.splitlines() if status == 0 else []:
            d = json.loads(line)
            if d["seq"] in first and first[d["seq"]]["shard"] != d["shard"]:
                return d["event"]["id"]
            first.setdefault(d["seq"], d)
        return None

    c = Comparer(pt, single, cluster, env)
    plan(c, subjects, whole["findings"], rnd, 1.0, shared_seq)
    results = c.run_all(max(2, os.cpu_count() or 2))
    by_command, statuses, differing = {}, {}, []
    for label, args, kind, a, b, why in results:
        done = by_command.setdefault(label, [0, 0])
        done[0] += 1
        statuses[a[0]] = statuses.get(a[0], 0) + 1
        if why:
            done[1] += 1
            differing.append((args, a, b, why))
    asked = {args[1] for _, args, _ in c.checks if args[0] == "thread"} & set(subjects.spanning)
    print("cluster compare: %d threads span shards, %d of them asked" % (len(subjects.spanning), len(asked)))
    print("cluster compare: comparisons by command: %s; exit statuses %s" % (
        ", ".join("%s %d%s" % (k, v[0], " (%d differ)" % v[1] if v[1] else "") for k, v in sorted(by_command.items())),
        ", ".join("%d: %d" % kv for kv in sorted(statuses.items()))))
    for args, a, b, why in differing[:8]:
        print("cluster compare: DIFFERS: pushtrail %s" % " ".join(args))
        print("    %s" % why)
        for side, r in (("single store", a), ("cluster", b)):
            if r[2].strip():
                print("    %s stderr: %s" % (side, short(r[2].decode("utf-8", "replace").strip(), 400)))
    if len(differing) > 8:
        print("cluster compare: … and %d more that differ" % (len(differing) - 8))
    for p in problems:
        print("cluster compare: FAIL: " + p)
    total = sum(v[0] for v in by_command.values())
    if problems or differing:
        return 1
    print("cluster compare: all %d answers equal" % total)
    return 0


def main(argv):
    if len(argv) >= 4 and argv[0] == "expect":
        return expect(argv[1], argv[2], argv[3:])
    if len(argv) >= 6 and argv[0] == "cross":
        return cross(argv[1], int(argv[2]), argv[3], argv[4], argv[5:])
    if len(argv) >= 5 and argv[0] == "shards":
        return shards(argv[1], argv[2], argv[3], argv[4:])
    if len(argv) >= 6 and argv[0] == "compare":
        return compare(argv[1], argv[2], argv[3], argv[4], int(argv[5]), argv[6:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
