"""Hostile HTTP traffic against pushtrail-server, over raw sockets, from several threads at once.

usage: hostile_http.py --bin DIR [--seed S] [--requests N] [--threads N] [--strict] [--keep]

DIR holds the built `pushtrail` and `pushtrail-server`. The script ingests Samples/events.ndjson
into a store in a temporary directory, starts `pushtrail-server --store STORE --listen 127.0.0.1:0`
(its standard error captured to a file; the port read from its `listening on` line) and, at once:

- N randomised requests (default 10,000) from --threads workers (default 8), generated up front
  from one seeded generator (the seed is printed; --seed repeats the requests): valid reads of
  every route, POSTs of new events made from the sample lines and of junk, pipelined requests, and
  mutations of all of these (byte flips, truncation, inserted bytes and sequences, random methods
  from CONNECT, TRACE and OPTIONS to random bytes, random headers);
- rounds of fixed hostile requests from two more threads, until the slow crowd below is released:
  malformed request lines and headers, ambiguous and broken framing (Content-Length with
  Transfer-Encoding, differing Content-Lengths, bad chunk sizes, truncated chunked bodies),
  oversized bodies (10 GiB declared, 4 MB sent, then closed), hostile NDJSON bodies and content
  types, hostile ids in every route with an id and odd query strings;
- a slow crowd from 127.0.0.2: 20 connections that send one header byte a second and 20 that send
  nothing, held until the traffic is done and the silent ones have met the idle timeout;
- one burst of 72 connections from 127.0.0.3, past the limit of 64 per address;
- from 127.0.0.4, GET /healthz on connections whose clients shut their write side once the request
  is sent (as `nc -N` does), up to 192 or until one is refused;
- GET /healthz every 0.5 s from a watcher thread, for the whole campaign.

The random and fixed traffic comes from 127.0.0.1. A malformed request that has no answer 0.25 s
after it is sent gets a half-close, so that a server waiting for the rest of it sees its end; the
server must then answer or close within 10 s.

A share of the requests carries `Authorization: Bearer pt_hostileSECRET123`.

It fails (exit 1, one line per kind of failure with a count and an example) when: the server dies,
or does not exit 0 within 15 s of SIGTERM; a response has a status of 500 or more other than 503
(a 505 to a request line that does not name HTTP/1.0 or HTTP/1.1 is libmicrohttpd's answer to an
unsupported version, and is counted apart); a request gets neither an answer nor a close within
10 s; a well-formed request is closed without an answer, or a valid one gets an unexpected status;
a request with both Content-Length and Transfer-Encoding is answered with anything but 400 (a
close is safe, and allowed), or a request after its body is answered, or one inside the body of a
request with two Content-Lengths; /healthz is not answered 200 within 1 s; a silent connection is
not closed within 45 s; one address holds more than 64 connections; the half-closed connections
lock their address out; the secret appears in a response
or on the server's standard error; an access-log line is not `METHOD ROUTE STATUS BYTES NNNµs` with
a route template (no raw path, no query), or fewer lines than answers from the routes; the store
does not verify afterwards; or, when the server serves POST /v1/events, a valid NDJSON POST is not
answered 200 with "appended", or its events are not in the store. Weaknesses outside these rules
are printed as findings; --strict makes them fail too.

Closed connections without an answer to malformed input are allowed, and counted.
"""
import argparse
import collections
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

SECRET = b"hostileSECRET123"
AUTHORIZATION = b"Authorization: Bearer pt_" + SECRET
MAIN_ADDR = "127.0.0.1"
# The slow crowd comes from its own loopback address, 40 strong: below the server's limit of 64
# connections per address, so that all 40 are accepted and held (the point is connections the
# server keeps), and not sharing that limit with 127.0.0.1, whose short connections (the workers,
# the fixed cases, the watcher, and those the server has not yet seen closed) would otherwise add
# up with it and let the limit, not the server, decide whether /healthz gets in.
SLOW_ADDR = "127.0.0.2"
LIMIT_ADDR = "127.0.0.3"
HALF_CLOSE_ADDR = "127.0.0.4"
SLOWLORIS = 20
SILENT = 20
PER_ADDRESS = 64
IDLE_TIMEOUT = 30.0
IDLE_GRACE = 15.0
REQUEST_TIMEOUT = 10.0
HEALTHZ_EVERY = 0.5
HEALTHZ_LIMIT = 1.0
STOP_LIMIT = 15.0
# The literal words of the route templates the access log may name; any other segment is a raw path.
ROUTE_WORDS = {"healthz", "metrics", "v1", "head", "stats", "tasks", "threads", "events", "audit", "export",
               "stream", "login", "logout"}
ROUTE_TEMPLATE = re.compile(r"\([a-z ]+\)|(/([a-z0-9]+|@?\{[a-z_]+\}))+")
STATUS_LINE = re.compile(rb"HTTP/(\d)\.(\d) (\d{3})")


def shown(data, limit=150):
    """A request or response for a report line: its first bytes, and its length when cut."""
    data = bytes(data)
    text = repr(data[:limit])
    return text + (f"… ({len(data):,} bytes)" if len(data) > limit else "")


def names_http1(data):
    """Whether the request's first line ends with HTTP/1.0 or HTTP/1.1."""
    first = re.split(rb"[\r\n]", bytes(data), maxsplit=1)[0]
    return first.rsplit(b" ", 1)[-1] in (b"HTTP/1.0", b"HTTP/1.1")


# MARK: - One exchange over a raw socket

class Outcome:
    """What came back for one probe."""

    def __init__(self):
        self.responses = []  # (status, headers, body), 1xx included
        self.finals = 0
        self.leftover = b""  # bytes after the last whole response
        self.truncated = False  # a response cut short of its Content-Length by the close
        self.raw = b""
        self.closed = False
        self.timed_out = False
        self.elapsed = 0.0
        self.answered_after = None  # seconds to the last of the answers wanted
        self.connect_error = None


def dechunk(buf, start):
    """A chunked body that starts at buf[start]: (its bytes, the offset after it), or None while it
    is incomplete or when its framing is broken."""
    body, pos = bytearray(), start
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        size = bytes(buf[pos:eol]).split(b";")[0].strip()
        try:
            size = int(size, 16)
        except ValueError:
            return None
        pos = eol + 2
        if size == 0:
            end = buf.find(b"\r\n\r\n", pos - 2)  # no trailers: the CRLF right after the 0 line
            return (bytes(body), end + 4) if end >= 0 else None
        if len(buf) < pos + size + 2:
            return None
        body += buf[pos:pos + size]
        pos += size + 2


def parse_responses(buf, heads, closed):
    """The responses at the start of buf, the offset after the last whole one, whether the last is
    open-ended (no Content-Length: its body runs to the close) and whether one was cut short."""
    out, pos, finals = [], 0, 0
    while pos < len(buf):
        end = buf.find(b"\r\n\r\n", pos)
        match = STATUS_LINE.match(buf, pos)
        if end < 0 or not match:
            break
        status = int(match.group(3))
        headers = {}
        for line in bytes(buf[pos:end]).split(b"\r\n")[1:]:
            name, colon, value = line.partition(b":")
            if colon:
                headers[name.strip().lower()] = value.strip()
        start = end + 4
        if status < 200:
            out.append((status, headers, b""))
            pos = start
            continue
        head = heads[finals] if finals < len(heads) else False
        length = headers.get(b"content-length")
        if head or status in (204, 304):
            length = 0
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            chunked = dechunk(buf, start)
            if chunked is None:
                if closed:
                    out.append((status, headers, bytes(buf[start:])))
                    return out, len(buf), False, True
                break
            body, pos = chunked
            out.append((status, headers, body))
            finals += 1
            continue
        elif length is None or not length.isdigit():
            out.append((status, headers, bytes(buf[start:])))
            return out, len(buf), True, False
        length = int(length)
        if len(buf) - start < length:
            if closed:
                out.append((status, headers, bytes(buf[start:])))
                return out, len(buf), False, True
            break
        out.append((status, headers, bytes(buf[start:start + length])))
        pos = start + length
        finals += 1
    return out, pos, False, False


def exchange(port, data, heads=(False,), src=None, grace=None, abort=False, linger=0.0, timeout=REQUEST_TIMEOUT):
    """Sends data (reading all the while) and reads until len(heads) answers have come (then lingers
    `linger` seconds for more), the server closes, or `timeout` passes. With a grace, the write side
    is shut that many seconds after everything is sent if no answer has come by then, so that a
    server waiting for the rest of a request sees its end (not at once: libmicrohttpd keeps a
    connection it has seen half-closed open after answering it, until its idle timeout). abort
    closes as soon as everything is sent."""
    o = Outcome()
    started = time.monotonic()
    deadline = started + timeout
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        if src:
            s.bind((src, 0))
        s.connect(("127.0.0.1", port))
    except OSError as e:
        o.connect_error = e
        s.close()
        o.elapsed = time.monotonic() - started
        return o
    s.setblocking(False)
    view = memoryview(data)
    sent, shut, writable = 0, False, True
    buf = bytearray()
    linger_until = sent_at = None
    try:
        while True:
            now = time.monotonic()
            if now >= deadline:
                o.timed_out = True
                break
            if linger_until is not None and now >= linger_until:
                break
            if sent >= len(data) and sent_at is None:
                sent_at = now
                if abort:
                    break
            if sent_at is not None and grace is not None and not shut and now >= sent_at + grace:
                shut = True
                try:
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            writing = writable and sent < len(data)
            wait = min(deadline, linger_until or deadline) - now
            if sent_at is not None and grace is not None and not shut:
                wait = min(wait, sent_at + grace - now)
            readable, can_write, _ = select.select([s], [s] if writing else [], [], min(wait, 0.5))
            if can_write:
                try:
                    sent += s.send(view[sent:sent + 262144])
                except BlockingIOError:
                    pass
                except OSError:
                    writable, sent = False, len(data)
            if readable:
                try:
                    chunk = s.recv(262144)
                except BlockingIOError:
                    continue
                except OSError:
                    o.closed = True
                    break
                if not chunk:
                    o.closed = True
                    break
                buf += chunk
                responses, _, open_ended, _ = parse_responses(buf, heads, False)
                finals = sum(1 for r in responses if r[0] >= 200)
                if finals >= len(heads) and not open_ended and linger_until is None:
                    o.answered_after = time.monotonic() - started
                    if not linger:
                        break
                    linger_until = time.monotonic() + linger
    finally:
        s.close()
    o.elapsed = time.monotonic() - started
    o.raw = bytes(buf)
    o.responses, pos, _, o.truncated = parse_responses(buf, heads, o.closed)
    o.finals = sum(1 for r in o.responses if r[0] >= 200)
    o.leftover = o.raw[pos:]
    return o


# MARK: - Probes

class Probe:
    """One connection's worth of traffic and what it must get.

    answer: a well-formed request, which must get an answer (not only a close); ok: the statuses
    a valid request may get (503 is always allowed); expect: (statuses, kind, fatal) for a probe
    of one rule; max_answers: (n, kind): more answers than n means a request hidden in a body was
    served; events: the ids of the valid events a POST carries."""

    __slots__ = ("group", "data", "heads", "answer", "ok", "expect", "grace", "abort", "linger", "max_answers",
                 "events")

    def __init__(self, group, data, heads=None, answer=False, ok=None, expect=None, abort=False, linger=0.0,
                 max_answers=None, events=()):
        self.group = group
        self.data = data
        self.heads = heads or (data[:5].upper() == b"HEAD ",)
        self.answer = answer
        self.ok = ok
        self.expect = expect
        # A well-formed request must be answered as it is; a malformed one may leave the server
        # waiting for more, and gets its end (a half-close) when no answer has come in 0.25 s.
        self.grace = None if answer else 0.25
        self.abort = abort
        self.linger = linger
        self.max_answers = max_answers
        self.events = events


def request(method, target, headers=(), body=b"", version=b"HTTP/1.1"):
    lines = [method + b" " + target + b" " + version, b"Host: 127.0.0.1", *headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def post(body, content_type=b"application/x-ndjson", headers=(), target=b"/v1/events"):
    fields = [b"Content-Length: %d" % len(body)]
    if content_type is not None:
        fields.append(b"Content-Type: " + content_type)
    return request(b"POST", target, fields + list(headers), body)


def quote(text):
    return urllib.parse.quote(text, safe="@").encode()


class Samples:
    """The sample store's ids, and new events made from its notifications."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.lines = [line.rstrip(b"\r\n") for line in f if line.strip()]
        events = [json.loads(line) for line in self.lines]
        self.ids = [e["id"] for e in events]
        self.notifications = [e for e in events if e["type"] == "notification"]
        tasks, threads = set(), set()
        for e in self.notifications:
            payload = e["payload"]
            if "aps" in payload:
                threads.add(payload["aps"].get("thread-id"))
                tasks.add(payload.get("task_id"))
            else:
                data = payload.get("android", {}).get("data") or payload.get("data") or {}
                threads.add(data.get("thread_id"))
                tasks.add(data.get("task_id"))
        self.tasks = sorted(int(t) for t in tasks if t is not None and str(t).isdigit())
        self.threads = sorted(t for t in threads if t)
        self.count = len(self.lines)

    def new_event(self, rng):
        """A sample notification under a new id: (id, its NDJSON line)."""
        event = dict(rng.choice(self.notifications))
        event["id"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        return event["id"], json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()


AT_VALUES = ["now", "2026-11-03", "2026-11-02T12:00:00Z", "2026-11-02T08:00:00.500Z", "@1", "@100", "-1h",
             "2020-01-01"]


def valid_read(rng, s):
    """A valid GET target and the statuses it may get (None: any below 500, for routes this build
    may not serve yet)."""
    pick = rng.randrange(12)
    if pick == 0:
        return b"/healthz", {200}
    if pick == 1:
        return b"/v1/head", {200}
    if pick == 2:
        return b"/v1/stats", {200}
    if pick in (3, 4):
        target = b"/v1/tasks/%d" % rng.choice(s.tasks)
        if rng.random() < 0.5:
            return target + b"?at=" + quote(rng.choice(AT_VALUES)), {200, 404}
        return target, {200}
    if pick in (5, 6):
        target = b"/v1/threads/" + urllib.parse.quote(rng.choice(s.threads), safe="").encode()
        if rng.random() < 0.5:
            return target + b"?at=" + quote(rng.choice(AT_VALUES)), {200, 404}
        return target, {200}
    if pick == 7:
        return b"/v1/events/" + quote(rng.choice(s.ids)), {200}
    if pick == 8:
        return b"/v1/events/@%d" % rng.randint(1, s.count), {200}
    if pick == 9:
        filters = [("user", "u_ben"), ("task", str(rng.choice(s.tasks))), ("thread", rng.choice(s.threads)),
                   ("type", rng.choice(["notification", "delivery", "action"])), ("since", "2026-11-01"),
                   ("until", "now"), ("code", "delivery_failed"), ("grep", "Due")]
        chosen = rng.sample(filters, rng.randint(0, 3))
        return b"/v1/audit" + (b"?" + urllib.parse.urlencode(chosen).encode() if chosen else b""), {200}
    if pick == 10:
        return b"/v1/events?limit=%d" % rng.randint(1, 50), None
    return b"/metrics", None


METHODS = [b"GET", b"HEAD", b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"CONNECT",
           b"PROPFIND", b"M-SEARCH", b"get", b"GETT", b"BREW"]
HEADER_NAMES = [b"Accept", b"Accept-Encoding", b"Range", b"If-None-Match", b"Cookie", b"Origin", b"Referer",
                b"User-Agent", b"Expect", b"Connection", b"Content-Type", b"Upgrade", b"X-Forwarded-For", b"Host",
                b"X-Request-Id", b"Forwarded"]
HEADER_VALUES = [b"*/*", b"gzip, br", b"bytes=0-1", b"bytes=-1,0-,5-4", b"\"x\"", b"a=b; c=d", b"null",
                 b"http://evil.example", b"100-continue", b"close", b"keep-alive", b"Upgrade", b"h2c",
                 b"websocket", b"text/html", b"1.2.3.4, ::1", b"", b"x" * 2000, b"caf\xc3\xa9", b"\xff\xfe\x80"]
SPECIAL = [b"%", b"%zz", b"%00", b"../", b"\x00", b"\r\n", b" ", b"\xff", b"?at=", b"&", b"\r\n\r\n",
           b"\r\nContent-Length: 5", b"\r\nTransfer-Encoding: chunked", b"\t", b"\x7f", b"HTTP/1.1"]


def random_method(rng):
    if rng.random() < 0.8:
        return rng.choice(METHODS), True
    if rng.random() < 0.5:
        return bytes(rng.choice(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(rng.randint(1, 24))), True
    return bytes(rng.randrange(0x21, 0x100) for _ in range(rng.randint(1, 8))), False


def random_headers(rng):
    """1 to 4 headers, each a known name with a value from HEADER_VALUES."""
    return [rng.choice(HEADER_NAMES) + b": " + rng.choice(HEADER_VALUES) for _ in range(rng.randint(1, 4))]


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op, n = rng.randrange(9), len(data)
        if n == 0:
            data += rng.choice(SPECIAL)
        elif op == 0:
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(n)] = rng.randrange(256)
        elif op == 1:
            i = rng.randrange(n)
            data[i] ^= 1 << rng.randrange(8)
        elif op == 2:
            del data[rng.randrange(n):]
        elif op == 3:
            i = rng.randrange(n + 1)
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif op == 4:
            i = rng.randrange(n)
            del data[i:i + rng.randint(1, 32)]
        elif op == 5:
            i = rng.randrange(n)
            j = min(n, i + rng.randint(1, 64))
            data[j:j] = data[i:j]
        elif op == 6:
            data = bytearray(bytes(data).replace(b"\r\n", rng.choice([b"\n", b"\r", b"\r\r\n", b"\n\r"]),
                                                 rng.randint(1, 3)))
        elif op == 7:
            version = rng.choice([b"HTTP/1.0", b"HTTP/0.9", b"HTTP/2.0", b"HTTP/1.2", b"HTTP/9.9", b"http/1.1",
                                  b"HTTP/1", b"HTTP/1.1.1", b"HTTP/01.1", b""])
            data = bytearray(bytes(data).replace(b"HTTP/1.1", version, 1))
        else:
            i = rng.randrange(n + 1)
            data[i:i] = rng.choice(SPECIAL)
    return bytes(data)


def valid_post(rng, s):
    events = [s.new_event(rng) for _ in range(rng.randint(1, 5))]
    body = b"".join(line + b"\n" for _, line in events)
    return body, tuple(event_id for event_id, _ in events)


JUNK_BODIES = [b"\xff\xfe\xfd\n", b"[]\n", b"{}\n", b"null\n", b"{\"type\":\"notification\"}\n", b"\n\n\n",
               b"{\"type\":\"notification\",\"id\":\"\x00\"}\n", b"[" * 100 + b"\n"]


def random_probe(rng, s, post_ok):
    """One randomised probe. post_ok: the statuses a valid POST /v1/events may get in this build."""
    secret = [AUTHORIZATION] if rng.random() < 0.25 else []
    r = rng.random()
    if r < 0.40:
        target, ok = valid_read(rng, s)
        method = b"HEAD" if rng.random() < 0.1 else b"GET"
        extra = random_headers(rng) if rng.random() < 0.3 else []
        return Probe("random valid", request(method, target, secret + extra), answer=True, ok=ok)
    if r < 0.50:
        body, events = valid_post(rng, s)
        return Probe("random POST", post(body, headers=secret), answer=True, ok=post_ok, events=events)
    if r < 0.55:
        body = rng.choice(JUNK_BODIES + [bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096)))])
        ctype = rng.choice([b"application/x-ndjson", b"text/plain", b"application/json", None])
        return Probe("random POST junk", post(body, ctype, secret), answer=True)
    if r < 0.60:
        reads = [valid_read(rng, s) for _ in range(rng.randint(2, 4))]
        methods = [b"HEAD" if rng.random() < 0.1 else b"GET" for _ in reads]
        data = b"".join(request(m, t, secret) for m, (t, _) in zip(methods, reads))
        ok = set.union(*[o or set(range(200, 500)) for _, o in reads])
        return Probe("random pipelined", data, heads=tuple(m == b"HEAD" for m in methods), answer=True, ok=ok)
    # Mutated: from a valid read, a valid POST, or a random method and target.
    base = rng.random()
    if base < 0.6:
        data = request(b"GET", valid_read(rng, s)[0], secret + (random_headers(rng) if rng.random() < 0.5 else []))
    elif base < 0.85:
        data = post(valid_post(rng, s)[0], headers=secret)
    else:
        method, token = random_method(rng)
        target = {b"CONNECT": b"127.0.0.1:22", b"OPTIONS": b"*"}.get(method, valid_read(rng, s)[0])
        data = request(method, target, secret + (random_headers(rng) if rng.random() < 0.5 else []))
        if token and rng.random() < 0.3:
            return Probe("random method", data, answer=True)
    return Probe("random mutated", mutate(rng, data))


def fixed_probes(s, rng):
    """The fixed hostile requests of one round."""
    probes = []

    def add(group, data, **kw):
        if len(probes) % 4 == 0 and b"\r\n\r\n" in data and data.startswith((b"GET ", b"POST ")):
            data = data.replace(b"\r\n", b"\r\n" + AUTHORIZATION + b"\r\n", 1)
        probes.append(Probe(group, data, **kw))

    healthz = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for data in [b"garbage\r\n\r\n", b"GET /healthz\r\n\r\n", b"GET /healthz HTTP/9.9\r\n\r\n",
                 b"GET /healthz HTTP/1.1 extra\r\n\r\n", b"GET  /healthz  HTTP/1.1\r\n\r\n",
                 b"GET /healthz HTTP/0.9\r\n\r\n", b"GET /healthz HTTP/1.2\r\n\r\n", b"GET /healthz HTTP/2\r\n\r\n",
                 b"GET /healthz HTTP/1.1.1\r\n\r\n", b"GET /healthz http/1.1\r\n\r\n", b"GET /healthz HTTP/\r\n\r\n",
                 b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40,
                 b"X" * 30000 + b" /healthz HTTP/1.1\r\n\r\n", b"X" * 70000 + b" /healthz HTTP/1.1\r\n\r\n",
                 b"GET" * 5000 + b" /healthz HTTP/1.1\r\n\r\n", b"\x00\x00\x00\x00\r\n\r\n",
                 b"GET /heal\x00thz HTTP/1.1\r\n\r\n", b"G\x00ET /healthz HTTP/1.1\r\n\r\n",
                 b"GET /healthz HTTP/1.1\x00\r\n\r\n", b"GET /healthz HTTP/1.1\nHost: x\n\n",
                 b"GET /healthz HTTP/1.1\rHost: x\r\r", b"\r\r\r\r", b"\n\n\n\n",
                 b"\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n",
                 b"GET /healthz HTTP/1.1", b"GET /healthz HTTP/1.1\r\n", b"", b" ", b"GET\t/healthz\tHTTP/1.1\r\n\r\n",
                 b"GET /" + b"\xff" * 100 + b" HTTP/1.1\r\n\r\n", b"\x1b[2J\x07GET /healthz HTTP/1.1\r\n\r\n",
                 b"GE\rT /healthz HTTP/1.1\r\n\r\n", b"../../x /healthz HTTP/1.1\r\n\r\n",
                 b"GET http://evil.example/healthz HTTP/1.1\r\n\r\n", b"GET * HTTP/1.1\r\n\r\n",
                 b"GET healthz HTTP/1.1\r\n\r\n", b"head /healthz HTTP/1.1\r\n\r\n"]:
        add("request line", data)
    for data in [healthz + b"NoColon\r\n\r\n", healthz + b"X-A : b\r\n\r\n", healthz + b"X-A: b\r\n  folded\r\n\r\n",
                 healthz + b"X-A: b\r\n\tfolded\r\n\r\n", healthz + b" X-Leading: space\r\n\r\n",
                 healthz + b"X-H: v\r\n" * 10000 + b"\r\n", healthz + b"X-Big: " + b"a" * (1 << 20) + b"\r\n\r\n",
                 healthz + b"X-Big: " + b"a" * 60000 + b"\r\n\r\n", healthz + b"X-" + b"n" * 60000 + b": v\r\n\r\n",
                 healthz + b"X-\xff\xfe: \xc3\x28\xa0\xa1\r\n\r\n", healthz + b"\xc0\xaf: \xed\xa0\x80\r\n\r\n",
                 healthz + b"X-Nul: a\x00b\r\n\r\n", healthz + b": empty-name\r\n\r\n", healthz + b":\r\n\r\n",
                 healthz + b"X A: b\r\n\r\n", healthz + b"Host: a\r\n" * 100 + b"\r\n",
                 b"GET /healthz HTTP/1.1\r\n\r\n", healthz + b"Connection: close, keep-alive, upgrade\r\n\r\n",
                 healthz + b"Expect: 100-continue\r\n\r\n", healthz + b"Upgrade: h2c\r\nConnection: Upgrade\r\n\r\n",
                 healthz + b"X-Esc: \x1b[31m\x07\r\n\r\n", healthz + b"X-Cr: a\rb\r\n\r\n"]:
        add("headers", data)

    def framing(head, body, **kw):
        add("framing", b"POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n" + head + b"\r\n" + body, **kw)

    both = ({400}, "Content-Length with Transfer-Encoding: chunked not refused with 400", True)
    smuggling = (1, "a request after the body of one with Content-Length and Transfer-Encoding was answered "
                    "(the connection is not closed after the 400: request smuggling)")
    for head in [b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                 b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
                 b"content-length: 5\r\ntransfer-encoding: CHUNKED\r\n",
                 b"Content-Length: 5\r\nTransfer-Encoding: gzip, chunked\r\n",
                 b"Content-Length: 0\r\nTransfer-Encoding: chunked\r\n"]:
        framing(head, b"0\r\n\r\n", expect=both, linger=0.5, max_answers=smuggling)
    smuggled = b"0\r\n\r\nGET /v1/head HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    framing(b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % len(smuggled), smuggled, expect=both,
            linger=1.0, max_answers=smuggling)
    framing(b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", b"0\r\n\r\nGET /v1/head HTTP/1.1\r\n\r\n",
            expect=both, linger=1.0, max_answers=smuggling)
    add("framing", b"GET /healthz HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        expect=both, linger=0.5, max_answers=smuggling)
    hidden = b"GET /v1/head HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    two = (1, "a request inside the body of one with two differing Content-Lengths was answered (request smuggling)")
    framing(b"Content-Length: 5\r\nContent-Length: %d\r\n" % (5 + len(hidden)), b"hello" + hidden, linger=1.0,
            max_answers=two)
    framing(b"Content-Length: %d\r\nContent-Length: 5\r\n" % (5 + len(hidden)), b"hello" + hidden, linger=1.0,
            max_answers=two)
    framing(b"Content-Length: 5\r\nTransfer-Encoding : chunked\r\n", b"0\r\n\r\n", linger=0.5,
            expect=({400}, "Transfer-Encoding with a space before its colon and Content-Length not refused", False))
    differing = ({400}, "two differing Content-Length headers accepted (RFC 9112 6.3: 400)", False)
    framing(b"Content-Length: 5\r\nContent-Length: 6\r\n", b"hello!", expect=differing, linger=0.5)
    framing(b"Content-Length: 6\r\nContent-Length: 5\r\n", b"hello!", expect=differing, linger=0.5)
    framing(b"Content-Length: 5, 6\r\n", b"hello!", expect=differing, linger=0.5)
    for value in [b"-5", b"-0", b"99999999999999999999999", b"18446744073709551616", b"0x10", b"+5", b" 5 ", b"5 5",
                  b"\xd9\xa1\xd9\xa2", b"", b"5\x00", b"1e3"]:
        framing(b"Content-Length: " + value + b"\r\n", b"hello", linger=0.3)
    for body in [b"zz\r\nhello\r\n0\r\n\r\n", b"fffffffffffffffffffff\r\nhello\r\n0\r\n\r\n", b"-1\r\nx\r\n0\r\n\r\n",
                 b"0x5\r\nhello\r\n0\r\n\r\n", b"5;" + b"e" * 70000 + b"\r\nhello\r\n0\r\n\r\n",
                 b"1\r\nab\r\n0\r\n\r\n",
                 b"10\r\nhel", b"5\r\nhello", b"5\r\nhello\r\n", b"5\r\nhello\r\n0\r\n", b"5 \r\nhello\r\n0\r\n\r\n",
                 b"5\nhello\n0\n\n", b"\r\n\r\n", b"5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n", b"0\r\n\r\n"]:
        framing(b"Transfer-Encoding: chunked\r\n", body)
    for coding in [b"identity", b"gzip", b"chunked, gzip", b"chunked, chunked", b"\xff"]:
        framing(b"Transfer-Encoding: " + coding + b"\r\n", b"0\r\n\r\n")

    ten_gib = 10 << 30
    few_mb = b"x" * (4 << 20)
    add("bodies", b"POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n"
        b"Content-Type: application/x-ndjson\r\n\r\n" % ten_gib + few_mb, abort=True)
    add("bodies", b"GET /healthz HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % ten_gib + few_mb, abort=True)
    add("bodies", b"POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        + (b"10000\r\n" + b"y" * 0x10000 + b"\r\n") * 64, abort=True)
    _, line = s.new_event(rng)
    for body in [b"{\"type\":\"notification\",\"id\":\"\xff\xfe\"}\n", b"\xc0\xae\xed\xa0\x80" + line + b"\n",
                 b"{\"type\":\"notification\",\"id\":\"" + b"a" * (1 << 20) + b"\"}\n",
                 line[:40] + b"\x00" + line[40:] + b"\n", b"[" + b",".join(s.lines[:3]) + b"]\n",
                 bytes(rng.randrange(256) for _ in range(65536)), b"", b"\n" * 1000,
                 b"[" * 100000 + b"\n", b"{}\n" * 10000, line + b"\r\n", b"\xef\xbb\xbf" + line + b"\n", line,
                 line + b"\n" + b"{" * 10 + b"\n", b" " * 65536 + b"\n"]:
        add("bodies", post(body), answer=True)
    for ctype in [b"text/plain", b"application/json", b"multipart/form-data; boundary=x",
                  b"application/x-www-form-urlencoded", b"application/x-ndjson; charset=latin1", None, b"\xff\xfe",
                  b"application/x-ndjson, text/html", b""]:
        add("content types", post(line + b"\n", ctype), answer=ctype != b"\xff\xfe")
    add("content types", post(line + b"\n", headers=[b"Expect: 100-continue"]), answer=True)

    routes = [b"/v1/tasks/", b"/v1/threads/", b"/v1/events/"]
    ids = [b"..", b"../", b"../../../../etc/passwd", b"..%2f..%2f..%2fetc%2fpasswd", b"%2e%2e%2f", b"%2e%2e",
           b"%252e%252e%252f", b"%00", b"a%00b", b"%0d%0aX-Injected:%201", b"%1b[31mred", b"\x01\x02\x7f", b"\x1b[2J",
           b"%ff%fe", b"%", b"%zz", b"%%41", b"%C0%AE%C0%AE%2F", b"a" * 102400, b"b" * 40000,
           "tâche-ü".encode(), b"%E2%80%AE", "😀".encode(), b"%F0%9F%98%80", b"@", b"@-1", b"@0",
           b"@18446744073709551616", b"@1e3", b"9" * 40, b"-1", b"+1103", b"1103.0", b"0x44F", b"%201103", b"1103%20",
           b";", b"*", b"{id}", b"..;", b"\\..\\..\\windows", b"%2F", b"a/b", b"%20", b"\xc3\x28", b"%u002e"]
    for route in routes:
        for i in ids:
            for target in (route + i, route + i + b"/export"):
                printable = all(0x21 <= c < 0x7f for c in target)
                add("ids", request(b"GET", target), answer=printable and len(target) < 60000)
    task, thread = s.tasks[0], urllib.parse.quote(s.threads[0], safe="").encode()
    bases = [b"/v1/tasks/%d" % task, b"/v1/threads/" + thread, b"/v1/audit", b"/v1/events", b"/v1/head"]
    queries = [b"at=", b"at", b"at=%", b"at=%zz", b"at=%0", b"at=%00", b"at=%ff", b"at=@", b"at=@-1",
               b"at=@99999999999999999999", b"at=-99999999999999h", b"at=9999-99-99", b"at=0000-00-00T00:00:00Z",
               b"at=2026-02-30", b"at=1e309", b"at=now&at=now", b"at=now&at=bogus", b"at=" + b"9" * 5000,
               b"at=%E2%98%83", b"at=\xe2\x98\x83", b"since=-1s&until=-2s", b"since=%", b"until=@0", b"limit=-1",
               b"limit=0", b"limit=99999999999999999999999", b"limit=abc", b"limit=1&limit=2", b"limit=%2B1",
               b"limit=1e3", b"task=x", b"task=1103&task=1104", b"user=%00", b"thread=../..", b"type=bogus", b"code=",
               b"code=,,,", b"code=nope", b"code=" + b"delivery_failed," * 200, b"grep=" + b"a" * 5000, b"grep=%00",
               b"grep=.*.*.*.*.*.*.*.*(a+)+$", b"residence=%", b"category=%ff", b"&&&&", b"=", b"==", b"?",
               b"a=1&" * 2000, b"%=%", b"at=now#frag", b"at=now;at=bogus", b"at[]=now", b"AT=now",
               b"notification_type=%0a", b"since=2026-11-02&since=x"]
    for base in bases:
        for q in queries:
            target = base + b"?" + q
            add("queries", request(b"GET", target), answer=all(0x21 <= c < 0x7f for c in target))
    return probes


# MARK: - The campaign

class Tally:
    """Everything counted, from every thread."""

    def __init__(self, strict):
        self.lock = threading.Lock()
        self.strict = strict
        self.failures = {}
        self.findings = {}
        self.statuses = collections.Counter()
        self.groups = collections.defaultdict(collections.Counter)
        self.closed = collections.Counter()
        self.closed_example = {}
        self.exempt_505 = 0
        self.route_answers = 0
        self.library_answers = 0
        self.store_path = None
        self.slowest = (0.0, b"")
        self.appended = []
        self.requests = collections.Counter()

    def fail(self, kind, example):
        with self.lock:
            entry = self.failures.setdefault(kind, [0, example])
            entry[0] += 1

    def find(self, kind, example):
        with self.lock:
            entry = self.findings.setdefault(kind, [0, example])
            entry[0] += 1

    def record(self, p, o, post_served, kind):
        with self.lock:
            g = self.groups[p.group]
            g["sent"] += 1
            self.requests[kind] += 1
        if o.connect_error:
            self.fail("cannot connect to the server", f"{p.group}: {o.connect_error}")
            return
        if SECRET in o.raw:
            self.fail("the bearer token's secret appears in a response", f"{shown(p.data)} → {shown(o.raw)}")
        example = f"{shown(p.data)} → {shown(o.raw, 100) if o.raw else ('closed' if o.closed else 'nothing')}"
        finals = [r for r in o.responses if r[0] >= 200]
        with self.lock:
            for status, headers, _ in o.responses:
                self.statuses[status] += 1
                g[f"{status // 100}xx"] += 1
                if b"x-content-type-options" in headers:
                    self.route_answers += 1
                elif status >= 200:
                    self.library_answers += 1
            if o.answered_after is not None and o.answered_after > self.slowest[0]:
                self.slowest = (o.answered_after, p.data)
        if self.store_path and self.store_path in o.raw:
            self.find("an answer names the store's path on disk", example)
        for status, _, _ in finals:
            if status == 503:
                self.find("503 \"the store cannot be read\" while it can: the request made the lookup fail "
                          "(e.g. an empty filter value reaching LMDB)", example)
            if status >= 500 and status != 503:
                if status == 505 and not names_http1(p.data):
                    with self.lock:
                        self.exempt_505 += 1
                else:
                    self.fail(f"status {status}", example)
        if o.timed_out and len(finals) < len(p.heads) and not p.abort:
            what = "an answer's body never completed" if o.raw else "neither an answer nor a close"
            self.fail(f"hang: {what} within {REQUEST_TIMEOUT:.0f} s", example)
        elif not finals and not p.abort:
            if p.answer:
                self.fail("a well-formed request closed without an answer", f"{p.group}: {example}")
            else:
                with self.lock:
                    self.closed[p.group] += 1
                    g["closed"] += 1
                    self.closed_example.setdefault(p.group, shown(p.data, 80))
        elif p.answer and len(finals) < len(p.heads):
            self.fail("pipelined requests left unanswered", f"{len(finals)} of {len(p.heads)}: {example}")
        if p.ok is not None:
            for status, _, _ in finals:
                # With no token defined, a request a proxy forwarded is refused (403).
                forwarded = b"\r\nX-Forwarded-For:" in p.data or b"\r\nForwarded:" in p.data
                if status not in p.ok and status != 503 and not (status == 403 and forwarded):
                    self.fail(f"a valid request answered {status}", f"{p.group}: {example}")
        if p.expect and finals and finals[0][0] not in p.expect[0]:
            (self.fail if p.expect[2] else self.find)(p.expect[1], example)
        if p.max_answers is not None and len(finals) > p.max_answers[0]:
            self.fail(p.max_answers[1], example)
        if o.leftover and o.closed:
            self.find("response framing broken: bytes after a whole response are not a response "
                      "(libmicrohttpd's own error responses)", example)
        if o.truncated:
            self.find("an answer shorter than its Content-Length", example)
        if p.events and post_served and finals and finals[0][0] == 200:
            try:
                answer = json.loads(finals[0][2])
            except ValueError:
                answer = None
            if not isinstance(answer, dict) or "appended" not in answer:
                self.fail("a valid NDJSON POST answered 200 without \"appended\"", example)
            else:
                with self.lock:
                    self.appended.extend(p.events)


class Campaign:
    def __init__(self, args, port, proc, samples, store):
        self.args = args
        self.port = port
        self.proc = proc
        self.samples = samples
        self.tally = Tally(args.strict)
        self.tally.store_path = os.path.realpath(store).encode()
        self.stop = threading.Event()  # the server died, or everything is done
        self.traffic_done = threading.Event()
        self.release = threading.Event()  # the slow crowd may go
        self.inflight = {}
        self.healthz = {"polls": 0, "worst": 0.0}
        self.slow = {}
        self.limit = None
        self.lockout = None
        self.post_served = None
        self.round_size = 0
        self.slow_addr = SLOW_ADDR

    def run_probe(self, p, kind):
        me = threading.get_ident()
        self.inflight[me] = p
        o = exchange(self.port, p.data, p.heads, None, p.grace, p.abort, p.linger)
        self.inflight.pop(me, None)
        if self.proc.poll() is None:  # once the server is dead, only its death is reported
            self.tally.record(p, o, self.post_served, kind)

    def probe_post(self):
        """Whether this build serves POST /v1/events (a valid line is then appended)."""
        event_id, line = self.samples.new_event(random.Random(self.args.seed ^ 0x5EED))
        o = exchange(self.port, post(line + b"\n"))
        status = o.finals and [r for r in o.responses if r[0] >= 200][0][0]
        if status == 405:
            return False
        p = Probe("POST probe", post(line + b"\n"), answer=True, ok={200}, events=(event_id,))
        self.tally.record(p, o, True, "fixed")
        return True

    def monitor(self):
        while not self.stop.is_set():
            code = self.proc.poll()
            if code is not None:
                flying = "; ".join(shown(p.data, 100) for p in list(self.inflight.values())[:4]) or "none"
                self.tally.fail("the server died", f"exit status {code}; requests in flight: {flying}")
                self.stop.set()
                return
            time.sleep(0.1)

    def watcher(self, started):
        healthz = request(b"GET", b"/healthz")
        while not self.stop.is_set():
            began = time.monotonic()
            o = exchange(self.port, healthz, timeout=5.0)
            status = o.finals and [r for r in o.responses if r[0] >= 200][0][0]
            latency = o.answered_after if o.answered_after is not None else o.elapsed
            self.healthz["polls"] += 1
            self.healthz["worst"] = max(self.healthz["worst"], latency)
            if (status != 200 or latency > HEALTHZ_LIMIT) and not self.stop.is_set():
                what = f"status {status}" if status else ("no answer" if not o.timed_out else "timed out")
                self.tally.fail(f"/healthz not answered 200 within {HEALTHZ_LIMIT:.0f} s",
                                f"at {began - started:.1f} s: {what} after {latency * 1000:.0f} ms")
            self.stop.wait(max(0.0, HEALTHZ_EVERY - (time.monotonic() - began)))

    def worker(self, probes, cursor):
        while not self.stop.is_set():
            with cursor["lock"]:
                i = cursor["next"]
                cursor["next"] += 1
            if i >= len(probes):
                return
            self.run_probe(probes[i], "random")

    def fixed(self, part, parts, rng_seed):
        rounds = 0
        while not self.stop.is_set():
            probes = fixed_probes(self.samples, random.Random(rng_seed + rounds))[part::parts]
            for p in probes:
                if self.stop.is_set():
                    return
                self.run_probe(p, "fixed")
            rounds += 1
            if self.traffic_done.is_set() and self.release.is_set():
                return
            self.stop.wait(0.5)

    def slow_crowd(self):
        """SLOWLORIS connections sending one header byte a second, SILENT ones sending nothing, from
        slow_addr, until released; records when the server closes each."""
        socks, opened = [], time.monotonic()
        for i in range(SLOWLORIS + SILENT):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((self.slow_addr, 0))
                s.connect(("127.0.0.1", self.port))
                if i < SLOWLORIS:
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            except OSError as e:
                self.tally.fail("the slow crowd could not connect", str(e))
                s.close()
                continue
            s.setblocking(False)
            socks.append([s, i < SLOWLORIS, None, 0])  # socket, slowloris, closed after (s), bytes sent
        self.slow = {"opened": len(socks), "socks": socks, "opened_at": opened}
        trickle = b"X-Slow: trickle\r\n"
        while not self.release.is_set() and not self.stop.is_set():
            now = time.monotonic()
            for entry in socks:
                s, slowloris, closed, count = entry
                if closed is not None:
                    continue
                try:
                    readable, _, _ = select.select([s], [], [], 0)
                    if readable and not s.recv(65536):
                        entry[2] = now - opened
                        continue
                    if slowloris:
                        s.send(trickle[count % len(trickle):count % len(trickle) + 1])
                        entry[3] += 1
                except OSError:
                    entry[2] = now - opened
            self.release.wait(1.0)
        self.slow["held"] = time.monotonic() - opened
        for entry in socks:
            entry[0].close()

    def per_address_limit(self):
        """72 connections from one address: at most 64 may be held; a held one still answers."""
        socks = []
        for _ in range(PER_ADDRESS + 8):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((LIMIT_ADDR, 0))
                s.connect(("127.0.0.1", self.port))
            except OSError:
                s.close()
                continue
            socks.append(s)
        time.sleep(1.0)
        held = []
        for s in socks:
            readable, _, _ = select.select([s], [], [], 0)
            try:
                alive = not readable or bool(s.recv(1, socket.MSG_PEEK))
            except OSError:
                alive = False
            if alive:
                held.append(s)
        answered = 0
        for s in held[:2]:
            try:
                s.settimeout(5.0)
                s.sendall(request(b"GET", b"/healthz"))
                answered += s.recv(65536).startswith(b"HTTP/1.1 200")
            except OSError:
                pass
        for s in socks:
            s.close()
        if self.proc.poll() is not None:
            return
        self.limit = (len(socks), len(held), answered)
        if len(held) > PER_ADDRESS:
            self.tally.fail("the per-address connection limit not enforced",
                            f"{len(held)} of {len(socks)} connections from {LIMIT_ADDR} held")
        if held and answered < min(2, len(held)):
            self.tally.fail("a connection held under the per-address limit does not answer",
                            f"{answered} of {min(2, len(held))} answered GET /healthz")

    def half_close_lockout(self):
        """GET /healthz from one address, each client shutting its write side once its request is
        sent (as `nc -N` does) and keeping the socket: the server must close each after its answer,
        else the answered connections hold that address's slots until the idle timeout. Up to three
        times the per-address limit are sent, until one is refused."""
        healthz = request(b"GET", b"/healthz")
        socks, answered = [], 0
        for _ in range(3 * PER_ADDRESS):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            buf = bytearray()
            try:
                s.settimeout(5.0)
                s.bind((HALF_CLOSE_ADDR, 0))
                s.connect(("127.0.0.1", self.port))
                s.sendall(healthz)
                s.shutdown(socket.SHUT_WR)
                while not parse_responses(buf, (False,), False)[0]:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
            except OSError:
                pass
            if not parse_responses(buf, (False,), True)[0]:
                break
            answered += 1
        time.sleep(2.0)
        kept = 0
        for s in socks:
            try:
                readable, _, _ = select.select([s], [], [], 0)
                kept += not readable or bool(s.recv(1, socket.MSG_PEEK))
            except (OSError, ValueError):
                pass
        after = exchange(self.port, healthz, src=HALF_CLOSE_ADDR, timeout=5.0)
        for s in socks:
            s.close()
        if self.proc.poll() is not None:
            return
        self.lockout = (len(socks), answered, kept, after.finals > 0)
        example = (f"GET /healthz from {HALF_CLOSE_ADDR}, each client half-closing: {answered} answered, then "
                   + (f"number {len(socks)} refused" if answered < len(socks) else "none refused")
                   + f"; 2 s after, {kept} still open on the server's side; a new connection from "
                   f"{HALF_CLOSE_ADDR} " + ("answered" if after.finals else "closed unanswered"))
        if not after.finals:
            self.tally.fail("answered half-closed connections are held until the idle timeout: 64 lock their "
                            "address out (4 addresses, the whole server)", example)
        elif kept:
            self.tally.find("the server keeps half-closed connections open after answering them", example)

    def run(self):
        started = time.monotonic()
        threads = [threading.Thread(target=self.monitor, daemon=True),
                   threading.Thread(target=self.watcher, args=(started,), daemon=True)]
        for t in threads:
            t.start()
        self.post_served = self.probe_post()
        if not self.post_served:
            print("hostile-http: POST /v1/events is not served by this build: append checks skipped", flush=True)
        post_ok = {200} if self.post_served else {405}
        rng = random.Random(self.args.seed)
        probes = [random_probe(rng, self.samples, post_ok) for _ in range(self.args.requests)]
        if not usable(self.slow_addr):
            self.slow_addr = MAIN_ADDR
            print(f"hostile-http: {SLOW_ADDR} cannot be bound; the slow crowd comes from {MAIN_ADDR}", flush=True)
        crowd = threading.Thread(target=self.slow_crowd, daemon=True)
        crowd.start()
        time.sleep(2.0)  # the crowd is connected and trickling before the traffic starts
        cursor = {"lock": threading.Lock(), "next": 0}
        workers = [threading.Thread(target=self.worker, args=(probes, cursor), daemon=True)
                   for _ in range(self.args.threads)]
        fixed = [threading.Thread(target=self.fixed, args=(i, 2, self.args.seed), daemon=True) for i in range(2)]
        self.round_size = len(fixed_probes(self.samples, random.Random(0)))
        for t in workers + fixed:
            t.start()
        if usable(LIMIT_ADDR) and not self.stop.is_set():
            self.per_address_limit()
        if usable(HALF_CLOSE_ADDR) and not self.stop.is_set():
            self.half_close_lockout()
        for t in workers:
            t.join()
        self.traffic_done.set()
        traffic = time.monotonic() - started
        # The silent connections meet the idle timeout IDLE_TIMEOUT s after they opened.
        deadline = self.slow.get("opened_at", started) + IDLE_TIMEOUT + IDLE_GRACE
        while time.monotonic() < deadline and not self.stop.is_set():
            if all(e[2] is not None for e in self.slow.get("socks", []) if not e[1]):
                break
            time.sleep(0.2)
        self.release.set()
        crowd.join()
        for t in fixed:
            t.join()
        for e in self.slow.get("socks", []) if self.proc.poll() is None else []:
            if not e[1] and e[2] is None:
                self.tally.fail(f"an idle connection not closed within {IDLE_TIMEOUT + IDLE_GRACE:.0f} s",
                                f"{sum(1 for x in self.slow['socks'] if not x[1] and x[2] is None)} silent "
                                f"connections still open after {self.slow['held']:.0f} s")
                break
        slowloris_closed = [e for e in self.slow.get("socks", []) if e[1] and e[2] is not None]
        if self.slow and not slowloris_closed and self.proc.poll() is None:
            self.tally.find("a connection sending a header byte a second is never closed (each byte restarts "
                            "the idle timeout; headers have no deadline)",
                            f"{SLOWLORIS} of {SLOWLORIS} held for {self.slow['held']:.0f} s")
        return traffic

    def keepalive_stop(self):
        """Idle keep-alive connections, open while SIGTERM arrives: the time the server takes to exit."""
        idle = []
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", self.port), timeout=5.0)
            s.sendall(request(b"GET", b"/healthz"))
            s.recv(65536)
            idle.append(s)
        self.stop.set()
        began = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(STOP_LIMIT)
        except subprocess.TimeoutExpired:
            code = None
        took = time.monotonic() - began
        for s in idle:
            s.close()
        return code, took


def usable(address):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((address, 0))
        return True
    except OSError:
        return False
    finally:
        s.close()


# MARK: - After the campaign

def check_log(tally, log):
    """The server's standard error: no secret, and access-log lines naming route templates only."""
    access = 0
    for raw in log.split(b"\n"):
        if not raw:
            continue
        if SECRET in raw:
            tally.fail("the bearer token's secret on the server's standard error", shown(raw))
        line = raw.decode("utf-8", errors="replace")
        if not line.startswith("pushtrail-server: "):
            tally.fail("a standard-error line without the pushtrail-server: prefix", shown(raw))
            continue
        rest = line[len("pushtrail-server: "):]
        if rest.startswith(("listening on http://", "stopping (signal ")) or rest == "stopped":
            continue
        parts = rest.rsplit(" ", 4)
        # The status is `-` for a request whose client left before the answer.
        if len(parts) != 5 or not ((parts[2].isdigit() and len(parts[2]) == 3 or parts[2] == "-")
                                   and parts[3].isdigit()
                                   and parts[4].endswith("µs") and parts[4][:-2].isdigit()):
            tally.fail("a standard-error line not in the form METHOD ROUTE STATUS BYTES NNNµs", shown(raw))
            continue
        access += 1
        method, route = parts[0], parts[1]
        if "../" in route or "?" in route or "=" in route or "%" in route:
            tally.fail("an access-log line holds a raw path or query", shown(raw))
        elif route != "/" and (not ROUTE_TEMPLATE.fullmatch(route) or not all(
                w in ROUTE_WORDS for w in route.split("/")[1:] if not w.startswith(("{", "@{")))):
            tally.fail("an access-log route is not a template (a new route's words go in ROUTE_WORDS)", shown(raw))
        if len(method) > 32 or any(not 0x21 <= ord(c) < 0x7f for c in method):
            tally.find("the access log carries the request's method as sent (control characters, "
                       "non-ASCII, or tens of KB in one line)", shown(raw, 100))
    if access < tally.route_answers:
        tally.fail("answered requests missing from the access log",
                   f"{access:,} access-log lines for {tally.route_answers:,} answers from the routes")
    return access


def check_store(tally, pushtrail, store, post_served, seed):
    verify = subprocess.run([pushtrail, "--store", store, "verify"], capture_output=True, text=True)
    if verify.returncode != 0:
        tally.fail("the store does not verify", f"exit {verify.returncode}: {verify.stdout} {verify.stderr}".strip())
    if not post_served:
        return verify.stdout.strip()
    raw = subprocess.run([pushtrail, "--store", store, "log", "--raw"], capture_output=True)
    stored = set()
    for line in raw.stdout.split(b"\n"):
        if line.strip():
            stored.add(json.loads(line).get("id"))
    missing = [i for i in tally.appended if i not in stored]
    if missing:
        tally.fail("events of an answered POST missing from the store",
                   f"{len(missing)} of {len(tally.appended)}, e.g. {missing[0]}")
    for event_id in random.Random(seed).sample(tally.appended, min(8, len(tally.appended))):
        show = subprocess.run([pushtrail, "--store", store, "show", event_id], capture_output=True, text=True)
        if show.returncode != 0 or event_id not in show.stdout:
            tally.fail("pushtrail show does not find a POSTed event", f"{event_id}: exit {show.returncode}")
    if not tally.appended:
        tally.fail("no POSTed event was appended", "POST /v1/events is served, yet no valid POST got 200")
    return f"{verify.stdout.strip()}; {len(tally.appended):,} POSTed events all stored"


def report(campaign, traffic, duration, access, code, took, store_line):
    t, c = campaign.tally, campaign
    classes = collections.Counter()
    for status, n in t.statuses.items():
        classes[f"{status // 100}xx"] += n
    out = print
    out(f"hostile-http: seed {c.args.seed}: {t.requests['random']:,} randomised requests and "
        f"{t.requests['fixed']:,} fixed hostile ones ({t.requests['fixed'] / max(1, c.round_size):.1f} rounds), "
        f"{c.healthz['polls']} /healthz polls; "
        f"traffic {traffic:.1f} s, campaign {duration:.1f} s")
    out("  statuses: " + ", ".join(f"{k} {classes[k]:,}" for k in sorted(classes)) + " ("
        + ", ".join(f"{s} ×{n:,}" for s, n in sorted(t.statuses.items())) + ")")
    if t.exempt_505:
        out(f"  505 to request lines not naming HTTP/1.0 or HTTP/1.1 (libmicrohttpd): {t.exempt_505:,}")
    out(f"  closed without an answer (malformed input): {sum(t.closed.values()):,}: "
        + ", ".join(f"{g} {n:,} (e.g. {t.closed_example[g]})" for g, n in t.closed.most_common()))
    for group in sorted(t.groups):
        g = t.groups[group]
        out(f"    {group:18} sent {g['sent']:6,}  " + "  ".join(
            f"{k} {g[k]:,}" for k in ("1xx", "2xx", "4xx", "5xx", "closed") if g[k]))
    out(f"  slowest answer: {t.slowest[0] * 1000:.0f} ms ({shown(t.slowest[1], 60)})")
    out(f"  /healthz: worst {c.healthz['worst'] * 1000:.1f} ms over {c.healthz['polls']} polls")
    if c.slow:
        socks = c.slow["socks"]
        silent = sorted(e[2] for e in socks if not e[1] and e[2] is not None)
        lor = [e for e in socks if e[1]]
        out(f"  slow crowd from {c.slow_addr}: {len(lor)} slowloris held {c.slow['held']:.0f} s "
            f"({sum(1 for e in lor if e[2] is not None)} closed by the server, {sum(e[3] for e in lor)} bytes "
            f"trickled); {len(socks) - len(lor)} silent, closed by the server after "
            + (f"{silent[0]:.1f}–{silent[-1]:.1f} s" if silent else "—"))
    if c.limit:
        out(f"  per-address limit: {c.limit[1]} of {c.limit[0]} connections from {LIMIT_ADDR} held, "
            f"{c.limit[0] - c.limit[1]} closed at once; {c.limit[2]} held ones answered /healthz")
    if c.lockout:
        out(f"  half-closed clients from {HALF_CLOSE_ADDR}: {c.lockout[1]} answered of {c.lockout[0]} sent (up to "
            f"a refusal), {c.lockout[2]} still open on the server's side 2 s after; a new connection then "
            + ("answered" if c.lockout[3] else "refused"))
    out(f"  stop: exit {code} {took:.2f} s after SIGTERM, with 3 idle keep-alive connections open")
    out(f"  access log: {access:,} lines for {t.route_answers:,} answers from the routes; "
        f"{t.library_answers:,} answers from libmicrohttpd itself, which have none")
    if not c.post_served:
        out("  POST /v1/events is not served by this build: append checks skipped")
    out(f"  store: {store_line}")
    for kind, (n, example) in sorted(t.findings.items()):
        out(f"  {'FAIL' if t.strict else 'finding'}: {kind}: {n:,}×, e.g. {example}")
    for kind, (n, example) in sorted(t.failures.items()):
        out(f"hostile-http: FAIL: {kind}: {n:,}×, e.g. {example}")
    failed = bool(t.failures) or (t.strict and bool(t.findings))
    out(f"hostile-http: {'FAILED' if failed else 'ok'} (seed {c.args.seed})")
    return 1 if failed else 0


def start_server(server, store, errors):
    proc = subprocess.Popen([server, "--store", store, "--listen", "127.0.0.1:0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(errors.name, "rb") as f:
            found = re.search(rb"listening on http://127\.0\.0\.1:(\d+) ", f.read())
        if found:
            return proc, int(found.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    with open(errors.name, "rb") as f:
        raise SystemExit(f"hostile-http: the server did not start (exit {proc.poll()}): {f.read()[-500:]!r}")


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description="Hostile HTTP traffic against pushtrail-server.")
    parser.add_argument("--bin", required=True, help="the directory of the built pushtrail and pushtrail-server")
    parser.add_argument("--seed", type=int, default=None, help="the random generator's seed (default: a new one)")
    parser.add_argument("--requests", type=int, default=10000, help="randomised requests (default 10,000)")
    parser.add_argument("--threads", type=int, default=8, help="threads sending them (default 8)")
    parser.add_argument("--samples", default=os.path.join(root, "Samples", "events.ndjson"))
    parser.add_argument("--strict", action="store_true", help="findings fail the run too")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (store, server log)")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "big")
    print(f"hostile-http: seed {args.seed} (--seed {args.seed} repeats these requests)", flush=True)
    pushtrail = os.path.join(args.bin, "pushtrail")
    server = os.path.join(args.bin, "pushtrail-server")
    work = tempfile.mkdtemp(prefix="pushtrail-hostile-")
    proc = None
    try:
        store = os.path.join(work, "store")
        subprocess.run([pushtrail, "--store", store, "ingest", "-q", args.samples], check=True,
                       stdout=subprocess.DEVNULL)
        samples = Samples(args.samples)
        with open(os.path.join(work, "server.err"), "wb") as errors:
            proc, port = start_server(server, store, errors)
            began = time.monotonic()
            campaign = Campaign(args, port, proc, samples, store)
            traffic = campaign.run()
            died = proc.poll() is not None
            code, took = campaign.keepalive_stop() if not died else (proc.returncode, 0.0)
            duration = time.monotonic() - began
        if code is None:
            campaign.tally.fail(f"the server did not exit within {STOP_LIMIT:.0f} s of SIGTERM", "killed")
            proc.kill()
            proc.wait()
        elif code != 0 and not died:
            campaign.tally.fail("the server's exit status after SIGTERM is not 0", f"exit {code}")
        with open(os.path.join(work, "server.err"), "rb") as f:
            log = f.read()
        access = check_log(campaign.tally, log)
        store_line = check_store(campaign.tally, pushtrail, store, campaign.post_served, args.seed)
        status = report(campaign, traffic, duration, access, code, took, store_line)
        if status and died:
            print("hostile-http: the server's last lines:\n" + log[-2000:].decode("utf-8", errors="replace"))
        if args.keep:
            print(f"hostile-http: kept {work}")
        return status
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
