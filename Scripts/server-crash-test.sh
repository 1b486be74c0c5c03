#!/usr/bin/env bash
# Kills pushtrail-server with SIGKILL while 8 clients POST batches, and checks that
# nothing acknowledged is lost: every event of every batch that got a 200 is in the
# store after the kill, `verify` passes, and re-sending the unanswered batches gives
# 0 conflicts and completes the store (each event exactly once).
#
#   Scripts/server-crash-test.sh [--points N] [--seed S] [--clients N] [--batch N]
#
# Defaults: 20 points, 8 clients, 50 events a batch. The full campaign is --points 200.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PT_ROOT"

points=20
seed=7
clients=8
batch=50
while [ $# -gt 0 ]; do
    case "$1" in
        --points) points="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --clients) clients="$2"; shift 2 ;;
        --batch) batch="$2"; shift 2 ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) say "server-crash-test: unknown option $1 (see --help)"; exit 2 ;;
    esac
done

need_swift
need_build_deps
command -v python3 >/dev/null || need_packages python3
say "server-crash-test: building release…"
swift build -c release --product pushtrail >/dev/null
swift build -c release --product pushtrail-server >/dev/null
bin="$(swift build -c release --show-bin-path)"

work="${TMPDIR:-/tmp}/pushtrail-server-crash-$$"
rm -rf "$work"; mkdir -p "$work"
trap 'pkill -KILL -f "pushtrail-server --store $work/" 2>/dev/null || true; rm -rf "$work"' EXIT
say "server-crash-test: $points kills of the server while $clients clients POST $batch-event batches"
python3 "$PT_ROOT/Scripts/reliability/server_crash.py" "$bin/pushtrail" "$bin/pushtrail-server" "$work" "$points" \
    "$seed" "$clients" "$batch"
