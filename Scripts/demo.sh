#!/usr/bin/env bash
# Installs what is missing, builds pushtrail (release), and runs the main job on the
# bundled Samples/: ingest the event log and the .apns files into an embedded store,
# then answer two support questions from it, export a notification, write an HTML
# report of a thread, print a simulator replay script, and verify the chain.
# Everything it writes goes in one folder, made afresh:
#   Scripts/demo.sh [DIR]     (default: ./demo; the store is DIR/store.lmdb)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

need_swift
need_build_deps
out="${1:-$PT_ROOT/demo}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
store="$out/store.lmdb"

say "building pushtrail (release)…"
swift build -c release --product pushtrail
bin="$(swift build -c release --show-bin-path)/pushtrail"

rm -rf "$store"
mkdir -p "$out"
export PUSHTRAIL_STORE="$store"
run() { printf '\n$ pushtrail %s\n' "$*"; "$bin" "$@"; }

run ingest Samples/events.ndjson
run import Samples/task_*.apns --user u_simulator --at 2026-11-29T12:00:00Z
run import Samples/android/task_*.json --platform android --user u_emulator --at 2026-11-29T12:00:00Z
run stats
run task 1102 --at @61          # "I pressed complete and nothing happened": the task right after the press
run audit --thread task-1109 || true   # "the buttons were wrong" (audit exits 1 when it finds something)
run export 14557b3c-ed72-4565-89d3-91e6848930e4 -o -   # the notification as an .apns payload
run thread task-1301            # Android: "there was no Mark In Progress button"
# The same Android notification as an adb broadcast for an emulator (its first lines).
printf '\n$ pushtrail export 57d84e5b-548b-4986-a627-9bc62d0e65fa --format adb -o - | head -4\n'
"$bin" export 57d84e5b-548b-4986-a627-9bc62d0e65fa --format adb -o - | head -4 | cut -c1-160
report="$out/task-1109.html"
replay="$out/replay-task-1109.sh"
run report --thread task-1109 -o "$report" --force   # the thread as the user saw it, for the ticket
# The pushes as xcrun simctl commands, for an iOS developer with a Simulator.
printf '\n$ pushtrail replay --thread task-1109 --dry-run > %s\n' "$replay"
"$bin" replay --thread task-1109 --dry-run >"$replay"
sed -n '1,7p' "$replay" | cut -c1-160
run verify
run head
printf '\nThe store is in %s (readable with mdb_stat -a / mdb_dump).\n' "$store"
printf 'The report is %s (open it in a browser); the replay script is %s.\n' "$report" "$replay"
printf 'Try: %s --store %s show @1\n' "$bin" "$store"
