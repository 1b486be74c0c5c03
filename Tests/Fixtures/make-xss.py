#!/usr/bin/env python3
"""Writes xss.ndjson: valid events, iOS and Android, whose every free-text field carries
markup that a careless HTML report would execute. Used by ReportCommandTests and
Scripts/report-check.sh (which renders it in headless Chromium).

    python3 Tests/Fixtures/make-xss.py > Tests/Fixtures/xss.ndjson
"""
import json

ATTACKS = [
    "<script>document.title='pwned'</script>",
    "<img src=x onerror=alert(1)>",
    "\"><svg onload=alert(2)>",
    "'><iframe src=javascript:alert(3)></iframe>",
    "<a href=\"javascript:alert(4)\">tap</a>",
    "</p></div><style>body{display:none}</style>",
    "<!-- unterminated comment",
    "&lt;already escaped&gt; & <b>bold</b",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(5)>",
    "javascript:alert(6)",
    "<body onpageshow=alert(7)>",
    "]]><![CDATA[<script>alert(8)</script>",
]
THREAD = "<script>alert('thread')</script>"
USER = "<img src=x onerror=alert('user')>"


def notification(i, attack, category):
    return {
        "type": "notification",
        "id": f"00000000-0000-4000-8000-{i:012d}",
        "at": f"2026-11-10T08:{i:02d}:00Z",
        "user": USER,
        "device": "ab" * 32,
        "topic": "com.example.<b>app</b>",
        "payload": {
            "aps": {
                "alert": {"title": attack, "subtitle": attack, "body": attack},
                "category": category,
                "thread-id": THREAD,
            },
            "task_id": 9001,
            "task_name": attack,
            "residence_name": attack,
            "notification_type": attack,
            "button_types": [attack],
        },
    }


def android(i, attack):
    """An Android notification: the FCM message with markup in its data values and keys,
    its button names, its package and, on every other line, a notification block."""
    data = {
        "task_id": "9001", "thread_id": THREAD, "category": "TASK_ACTIONABLE" if i % 2 == 0 else attack,
        "task_name": attack, "residence_name": attack, "notification_type": attack,
        "button_types": json.dumps(["complete", attack, "cancel", attack]),
        "gcm." + attack: attack, attack: attack,
    }
    message = {"token": f"x{i}:APA91b" + "A" * 40, "data": data,
               "android": {"priority": "HIGH", "restricted_package_name": "com.example." + attack}}
    if i % 2 == 0:
        data.update({"title": attack, "subtitle": attack, "body": attack})
    else:
        message["notification"] = {"title": attack, "body": attack}
    return {
        "type": "notification", "id": f"00000000-0000-4000-8000-1{i:011d}", "at": f"2026-11-10T09:{i:02d}:00Z",
        "user": USER, "platform": "android", "project": attack, "payload": message,
    }


def main():
    lines = []
    for i, attack in enumerate(ATTACKS):
        category = "TASK_ACTIONABLE" if i % 2 == 0 else attack
        lines.append(notification(i, attack, category))
        lines.append({
            "type": "delivery", "id": f"dlv-<i>{i}</i>", "at": f"2026-11-10T08:{i:02d}:01Z", "user": USER,
            "notification_id": lines[-1]["id"], "status": 400 + i, "reason": attack,
        })
        lines.append({
            "type": "action", "id": f"act-\"{i}\"<x>", "at": f"2026-11-10T08:{i:02d}:30Z", "user": USER,
            "task_id": 9001, "action": "complete", "outcome": "failed", "notification_id": lines[-2]["id"],
            "thread_id": THREAD, "http_status": 500, "error": attack,
        })
    for i, attack in enumerate(ATTACKS):
        lines.append(android(i, attack))
        token = lines[-1]["payload"]["token"]
        ok = i % 2 == 0
        lines.append({
            "type": "delivery", "id": f"dlv-<a>{i}</a>", "at": f"2026-11-10T09:{i:02d}:01Z", "user": USER,
            "device": token, "notification_id": lines[-1]["id"], "status": 200 if ok else 404 + i,
            **({"message_id": "projects/p/messages/0:" + attack} if ok else {"reason": attack}),
        })
        lines.append({
            "type": "action", "id": f"act-android-{i}<y>", "at": f"2026-11-10T09:{i:02d}:30Z", "user": USER,
            "device": token, "task_id": 9001, "action": "cancel", "outcome": "rejected",
            "notification_id": lines[-2]["id"], "thread_id": THREAD, "http_status": 409, "error": attack,
        })
    for line in lines:
        print(json.dumps(line, ensure_ascii=False, separators=(",", ":")))


if __name__ == "__main__":
    main()
