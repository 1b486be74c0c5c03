#!/usr/bin/env python3
"""Benchmark preparation, outside every timing (python3 stdlib only).

    prep.py NDJSON TARGETS.json [--mdb-load OUT]

One pass over the generated NDJSON:
  * chooses the query targets deterministically (same data, same choice):
      - thread: thread membership (notifications with aps.thread-id X, or an Android
        data map's thread_id X, actions with
        thread_id X, actions and deliveries whose notification_id is one of X's
        notifications). Among the threads with exactly 15 members (else the member
        count in 13..17 closest to 15, the lower first), the one in the middle when
        they are sorted by the line of their first event;
      - task: the task_id of that thread's notifications;
      - user: users sorted by (number of events, name), the middle one;
  * records the expected result sizes, used to check that pushtrail, sqlite3 and jq
    select the same events;
  * samples the ids the server is asked about: up to 300 task ids and 300 thread ids,
    evenly spaced over the sorted ids of the tasks and threads that have a notification;
  * with --mdb-load, writes mdb_load's input (mdb_dump "print" format): key = 8-byte
    big-endian seq (1, 2, 3 … in line order, \\xx-escaped), value = the line as is
    (only "\\" doubled), one record per non-blank line.
"""
import json
import sys


def main(argv):
    if len(argv) not in (3, 5) or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, out = argv[1], argv[2]
    mdb_out = argv[4] if len(argv) == 5 and argv[3] == "--mdb-load" else None

    notif_thread = {}       # notification id (lowercased) -> thread
    thread_count = {}       # thread -> members counted so far (notifications, actions with thread_id)
    thread_first = {}       # thread -> first line index of a member
    thread_task = {}        # thread -> task id (from its notifications)
    refs = []               # (line index, notification id, own thread_id or None) of actions/deliveries
    task_count = {}         # task -> notifications + actions
    user_count = {}
    lines = 0
    size = 0

    mdb = None
    if mdb_out:
        mdb = open(mdb_out, "wb", buffering=1 << 20)
        mdb.write(b"VERSION=3\nformat=print\ntype=btree\nmapsize=%d\nmaxreaders=126\nHEADER=END\n"
                  % (1 << 40))
    keyhex = [b"\\%02x" % i for i in range(256)]
    loads = json.loads

    with open(src, "rb", buffering=1 << 20) as f:
        for raw in f:
            size += len(raw)
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line.strip():
                continue
            idx = lines
            lines += 1
            if mdb is not None:
                k = lines.to_bytes(8, "big")
                mdb.write(b" " + b"".join([keyhex[b] for b in k]) + b"\n "
                          + line.replace(b"\\", b"\\\\") + b"\n")
            try:
                ev = loads(line)
            except ValueError:
                continue
            if not isinstance(ev, dict):
                continue
            user = ev.get("user")
            if isinstance(user, str):
                user_count[user] = user_count.get(user, 0) + 1
            t = ev.get("type")
            if t == "notification":
                payload = ev.get("payload") if isinstance(ev.get("payload"), dict) else {}
                if ev.get("platform") == "android":
                    # The FCM message's data map (android.data replaces data), strings.
                    android = payload.get("android") if isinstance(payload.get("android"), dict) else {}
                    data = android.get("data") if isinstance(android.get("data"), dict) else payload.get("data")
                    data = data if isinstance(data, dict) else {}
                    th = data.get("thread_id")
                    task = data.get("task_id")
                    if isinstance(task, str) and task.isdigit():
                        task = int(task)
                else:
                    aps = payload.get("aps") if isinstance(payload.get("aps"), dict) else {}
                    th = aps.get("thread-id")
                    task = payload.get("task_id")
                if isinstance(task, int):
                    task_count[task] = task_count.get(task, 0) + 1
                if isinstance(th, str):
                    notif_thread[str(ev.get("id", "")).lower()] = th
                    thread_count[th] = thread_count.get(th, 0) + 1
                    thread_first.setdefault(th, idx)
                    if isinstance(task, int):
                        thread_task.setdefault(th, task)
            elif t in ("action", "delivery"):
                own = None
                if t == "action":
                    task = ev.get("task_id")
                    if isinstance(task, int):
                        task_count[task] = task_count.get(task, 0) + 1
                    th = ev.get("thread_id")
                    if isinstance(th, str):
                        own = th
                        thread_count[th] = thread_count.get(th, 0) + 1
                        thread_first.setdefault(th, idx)
                nid = ev.get("notification_id")
                if isinstance(nid, str):
                    refs.append((idx, nid.lower(), own))

    if mdb is not None:
        mdb.write(b"DATA=END\n")
        mdb.close()

    for idx, nid, own in refs:
        th = notif_thread.get(nid)
        if th is not None and th != own:
            thread_count[th] += 1
            if idx < thread_first[th]:
                thread_first[th] = idx
    del refs

    chosen = None
    for want in (15, 14, 16, 13, 17):
        cands = sorted((thread_first[th], th) for th, n in thread_count.items()
                       if n == want and th in thread_task)
        if cands:
            chosen = cands[len(cands) // 2][1]
            break
    if chosen is None:
        print("prep: no thread with 13-17 events in %s" % src, file=sys.stderr)
        return 1
    task = thread_task[chosen]
    users = sorted((n, u) for u, n in user_count.items())
    ucount, user = users[len(users) // 2]
    thread_notifs = sorted(n for n, th in notif_thread.items() if th == chosen)

    def spread(xs, n=300):
        xs = sorted(xs)
        return xs if len(xs) <= n else [xs[i * len(xs) // n] for i in range(n)]

    result = {
        "lines": lines,
        "bytes": size,
        "thread": chosen,
        "thread_events": thread_count[chosen],
        "thread_notification_ids": thread_notifs,
        "task": task,
        "task_events": task_count.get(task, 0),
        "user": user,
        "user_events": ucount,
        "users": len(users),
        "threads": len(thread_count),
        "tasks": len(task_count),
        "sample_tasks": spread(set(thread_task.values())),
        "sample_threads": spread(thread_task),
        "sample_users": spread(user_count),
        "sample_notifications": spread(notif_thread),
    }
    with open(out, "w") as o:
        json.dump(result, o, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
