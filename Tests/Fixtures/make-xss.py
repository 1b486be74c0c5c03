#!/usr/bin/env python3
"""Writes xss.ndjson: valid events whose every free-text field carries markup that a
careless HTML report would execute. Used by ReportCommandTests and
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
    for line in lines:
        print(json.dumps(line, ensure_ascii=False, separators=(",", ":")))


if __name__ == "__main__":
    main()
