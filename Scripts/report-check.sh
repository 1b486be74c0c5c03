#!/usr/bin/env bash
# Renders HTML reports in a real browser (headless Chromium) and checks what it drew.
#
#   Scripts/report-check.sh [--out DIR]
#
# 1. A report of the sample store's thread task-1109 ("the buttons were wrong") is
#    rendered to a PNG screenshot and its DOM is dumped; the DOM must hold the
#    notifications' titles, the category's button labels, the finding and the store's
#    chain head, and only the elements and attributes the report writes.
# 2. Android cards: reports of the sample's Android stories (task-1301: four buttons
#    sent, three shown; task-1302: a notification message; task-1304: an iPhone and a
#    tablet in one thread) are rendered at desktop and phone widths. Each Android
#    notification must be a card (not a banner) with its title and body, at most three
#    buttons seen, and the ones never seen struck and marked "not shown".
# 3. A report of Tests/Fixtures/xss.ndjson (markup in every free-text field, iOS and
#    Android) must show every attack as text and add no element or attribute.
# 4. The checker itself must fail on a page with the escaping undone, and on a card
#    whose "not shown" marker is gone or that shows a fourth button.
# Installs chromium (Debian's package) when missing. The PNGs stay in --out
# (default: a temporary directory, kept and named at the end).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="$2"; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) say "report-check: unknown option $1 (see --help)"; exit 2 ;;
    esac
done

need_swift
need_build_deps
command -v python3 >/dev/null || need_packages python3
command -v chromium >/dev/null || need_packages chromium
swift build --product pushtrail >/dev/null
pt="$(swift build --show-bin-path)/pushtrail"

[ -n "$out" ] || out="$(mktemp -d "${TMPDIR:-/tmp}/pushtrail-report-check-XXXXXX")"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Headless Chromium as root in a container needs --no-sandbox; no GPU here.
browse() { chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run "$@" 2>/dev/null; }
check() { python3 Scripts/report/check_dom.py "$@"; }

# 1. The sample story.
"$pt" --store "$work/samples" ingest -q Samples/events.ndjson >/dev/null
"$pt" --store "$work/samples" report --thread task-1109 -o "$out/task-1109.html" 2>/dev/null
browse --window-size=1000,2600 --screenshot="$out/task-1109.png" "file://$out/task-1109.html" >/dev/null
[ -s "$out/task-1109.png" ] || { say "report-check: FAILED: chromium wrote no screenshot"; exit 1; }
size=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n"; print("%dx%d" % struct.unpack(">II", d[16:24]))' "$out/task-1109.png")
browse --dump-dom "file://$out/task-1109.html" >"$work/task-1109.dom"
head_hash=$("$pt" --store "$work/samples" head --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hash"])')
check "$work/task-1109.dom" \
    --expect "Due soon: Clean dryer vent" --expect "Cancelled: Clean dryer vent" --expect "Overdue: Clean dryer vent" \
    --expect "Edit" --expect "Complete" --expect "Cancel" --expect "Mark In Progress" --expect "Uncancel" --expect "Delete" \
    --expect "category_state_mismatch" --expect "Task is cancelled; restore it before completing" \
    --expect "$head_hash" --banners 4 --cards 0
echo "report-check: sample report rendered ($size PNG, $out/task-1109.png)"

# 2. Android cards.
shot() { browse --window-size="$2" --screenshot="$out/$1.png" "file://$out/$3.html" >/dev/null; }
for t in task-1301 task-1302 task-1304; do
    "$pt" --store "$work/samples" report --thread "$t" --app-name honeyDue -o "$out/$t.html" 2>/dev/null
    shot "$t" 1000,2400 "$t"
    shot "$t-narrow" 390,3200 "$t"
    [ -s "$out/$t.png" ] && [ -s "$out/$t-narrow.png" ] || { say "report-check: FAILED: no screenshot of $t"; exit 1; }
    browse --dump-dom "file://$out/$t.html" >"$work/$t.dom"
done
check "$work/task-1301.dom" --banners 0 --cards 2 \
    --card "Due soon: Replace fridge water filter" \
    --body "Replace fridge water filter is due Sun, Nov 22. Mark it done, start it, or reschedule." \
    --seen "Edit,Complete,Cancel" --unseen "Mark In Progress" \
    --card "In progress: Replace fridge water filter" --seen "Edit,Complete,Cancel" --unseen "" \
    --expect "honeyDue" --expect "Harbor View Condo" --expect "not shown" \
    --expect "Android shows at most 3 action buttons, and button_types lists 4." --expect "too_many_actions"
check "$work/task-1302.dom" --banners 0 --cards 2 \
    --card "Overdue: Clean dishwasher filter" \
    --body "Clean dishwasher filter was due Sat, Nov 21 and is 2 days overdue." \
    --seen "" --unseen "Complete,Cancel,Mark In Progress" \
    --card "Completed: Clean dishwasher filter" --seen "" --unseen "" \
    --expect "the system displayed this notification without the app" --expect "fcm_notification_message"
check "$work/task-1304.dom" --banners 3 --cards 3 \
    --card "Due soon: Lubricate garage door opener" --seen "Complete,Cancel,Mark In Progress" --unseen "" \
    --expect "APNs answered" --expect "FCM answered"
echo "report-check: Android cards rendered ($out/task-1301.png, task-1302.png, task-1304.png and -narrow.png)"

# 3. Hostile strings.
python3 Tests/Fixtures/make-xss.py >"$work/xss.ndjson"
"$pt" --store "$work/xss" ingest -q "$work/xss.ndjson" >/dev/null
"$pt" --store "$work/xss" report --thread "<script>alert('thread')</script>" -o "$out/xss.html" 2>/dev/null
browse --window-size=1000,1400 --screenshot="$out/xss.png" "file://$out/xss.html" >/dev/null
browse --dump-dom "file://$out/xss.html" >"$work/xss.dom"
check "$work/xss.dom" --hostile
echo "report-check: hostile report rendered inert ($out/xss.png)"

# 4. The check can fail: undo the escaping of the first attack and expect a complaint.
sed 's/&lt;script&gt;/<script>/g; s/&lt;img src=x/<img src=x/g' "$out/xss.html" >"$work/broken.html"
browse --dump-dom "file://$work/broken.html" >"$work/broken.dom"
if check "$work/broken.dom" --hostile >/dev/null; then
    say "report-check: FAILED: the DOM check accepted a page with live markup"; exit 1
fi
echo "report-check: the DOM check rejects a page with the escaping undone"
# ... and a card whose unseen button lost its marker, or that shows a fourth button.
sed 's|<span class="tag">not shown</span>||' "$out/task-1301.html" >"$work/unmarked.html"
sed 's|<li class="unseen"><span class="label">Mark In Progress</span>|<li class="seen">Mark In Progress<span>|' \
    "$out/task-1301.html" >"$work/four.html"
for page in unmarked four; do
    browse --dump-dom "file://$work/$page.html" >"$work/$page.dom"
    if check "$work/$page.dom" >/dev/null; then
        say "report-check: FAILED: the card check accepted the $page page"; exit 1
    fi
done
echo "report-check: the card check rejects a card with no 'not shown' marker and one with four buttons"
echo "report-check: 4 passed, 0 failed"
